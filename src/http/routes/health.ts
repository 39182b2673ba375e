import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ServiceError } from '../../domain/errors.ts';

const plugin: FastifyPluginAsyncZod = async (app) => {
  // A store's outage is logged when it starts and when it ends, not on every probe of a load balancer.
  const down = new Set<string>();
  // The projections' position when a probe first found them behind at it: a position that stays
  // behind for READY_MAX_STALL_MS is a stall (every write waits for the read models meanwhile), however few events it lags.
  let stalled: { at: bigint; since: number } | null = null;
  app.get('/healthz', { schema: { hide: true } }, async function healthz() {
    return { status: 'ok' };
  });

  app.get(
    '/readyz',
    { schema: { hide: true, response: { 200: z.object({ status: z.literal('ready') }), 503: z.object({ status: z.literal('not_ready'), reason: z.string() }) } } },
    /**
     * Ready when both stores answer, the projections authentication reads have taken in the last
     * credential change (within CREDENTIAL_CATCH_UP_MS, as a request waits: a server just started
     * answered every authenticated request 503 while it said ready), no projection is more than
     * READY_MAX_LAG_EVENTS events behind the log, and none stays behind at one position for READY_MAX_STALL_MS.
     */
    async function readyz(_request, reply) {
      for (const [which, store] of [['event store', app.events], ['read-model store', app.readModels]] as const) {
        try {
          await store.ping();
          if (down.delete(which)) app.log.info(`readiness: the ${which} answers again`);
        } catch (error) {
          // The cause (hosts, ports, driver detail) goes to the log, not to an unauthenticated caller.
          if (!down.has(which)) app.log.warn({ err: error }, `readiness: the ${which} does not answer`);
          down.add(which);
          return reply.status(503).send({ status: 'not_ready' as const, reason: `${which} unreachable (the cause is in the service log)` });
        }
      }
      try {
        await app.credentialsInForce();
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        return reply.status(503).send({ status: 'not_ready' as const, reason: 'the projections authentication reads (API keys, OAuth, teams, sites, dashboard sessions) have not taken in the latest credential change yet' });
      }
      await app.projections.refresh();
      const head = await app.events.headPosition();
      const at = app.projections.position;
      const now = app.clock.now().getTime();
      if (at >= head) stalled = null;
      else if (stalled?.at !== at) stalled = { at, since: now };
      const stallMs = app.config.READY_MAX_STALL_MS;
      if (stalled && stallMs > 0 && now - stalled.since > stallMs) {
        return reply.status(503).send({ status: 'not_ready' as const, reason: `projections have not moved for ${Math.round((now - stalled.since) / 1000)} s while behind the log (at ${at}, log at ${head})` });
      }
      if (at < head) {
        // Counted, not subtracted: positions need not be contiguous (EventStoreDB's are byte offsets).
        const max = app.config.READY_MAX_LAG_EVENTS;
        const behind = (await app.events.readAll({ after: at, limit: max + 1 })).length;
        if (behind > max) return reply.status(503).send({ status: 'not_ready' as const, reason: `projections more than ${max} events behind (at ${at}, log at ${head})` });
      }
      return { status: 'ready' as const };
    },
  );
};

export const healthRoutes = fp(plugin, { name: 'health-routes', dependencies: ['services'], encapsulate: true });
