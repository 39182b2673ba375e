import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Services } from '../../services.ts';

export const healthRoutes: FastifyPluginAsyncZod<{ services: Services }> = async (app, { services }) => {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  /** Ready when both stores answer and every projection has applied the whole log. */
  app.get(
    '/readyz',
    { schema: { hide: true, response: { 200: z.object({ status: z.literal('ready') }), 503: z.object({ status: z.literal('not_ready'), reason: z.string() }) } } },
    async (_request, reply) => {
      try {
        await services.events.ping();
        await services.readModels.ping();
      } catch (error) {
        return reply.status(503).send({ status: 'not_ready' as const, reason: `store unreachable: ${(error as Error).message}` });
      }
      await services.projections.refresh();
      const head = await services.events.headPosition();
      const at = services.projections.position;
      if (at < head) return reply.status(503).send({ status: 'not_ready' as const, reason: `projections at ${at}, log at ${head}` });
      return { status: 'ready' as const };
    },
  );
};
