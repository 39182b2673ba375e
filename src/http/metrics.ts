import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DeliveryStatus } from '../domain/webhookDelivery.ts';
import { SEVERAL_AUTHORIZATIONS, authorizationHeader } from './authenticate.ts';
import { errorBody } from './errorHandler.ts';
import type { EventStore } from '../ports/eventStore.ts';
import type { ProjectionRunner } from '../projections/projectionRunner.ts';

/** What a background role in this process reports to /metrics (set by server.ts once it has started them). */
export interface MetricsSources {
  webhooks?: { readonly position: bigint; readonly queue: { waitingForRetry: number; held: number; inFlight: number } };
  agent?: { readonly position: bigint };
}

const INGESTION_ROUTES = new Set(['/api/v1/sites/:siteId/outreach/inbox/messages']);

/** `http_2xx`-style classes keep the label's values few; the other statuses are fixed words. */
const outcomeOf = (status: DeliveryStatus): string => (status.startsWith('http_') ? `http_${status.slice(5, 6)}xx` : status);

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly sources: MetricsSources = {};
  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly ingestions = new Counter({
    name: 'outreach_ingestions_total',
    help: 'Inbox ingestion requests answered, by status (201 created, 200 idempotent replay, 4xx refused).',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  readonly deliveries = new Counter({
    name: 'outreach_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts made by this process, by outcome (ok, http_4xx, http_5xx, timeout, network_error, tls_error, blocked_destination).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor(deps: { headPosition(): Promise<bigint>; projectionPositions(): Array<[string, bigint]> }) {
    collectDefaultMetrics({ register: this.registry });
    const sources = this.sources;
    const lag = (head: bigint, at: bigint) => Number(head > at ? head - at : 0n);
    new Gauge({
      name: 'outreach_projection_lag',
      help: 'How far each projection is behind the head of the event log (log positions; events on SQLite).',
      labelNames: ['projection'] as const,
      registers: [this.registry],
      async collect() {
        const head = await deps.headPosition();
        for (const [name, at] of deps.projectionPositions()) this.set({ projection: name }, lag(head, at));
      },
    });
    new Gauge({
      name: 'outreach_agent_dispatch_lag',
      help: "How far the Outreach Agent is behind the head of the event log: its checkpoint, or the oldest dispatch it has read and not triaged yet (absent when the agent runs elsewhere).",
      registers: [this.registry],
      async collect() {
        // No sample where the agent runs in another process (a 0 would read as caught up).
        if (sources.agent) this.set(lag(await deps.headPosition(), sources.agent.position));
        else this.remove();
      },
    });
    new Gauge({
      name: 'outreach_webhook_dispatch_lag',
      help: "How far the webhook dispatcher's checkpoint is behind the head of the event log (absent when the delivery worker runs elsewhere).",
      registers: [this.registry],
      async collect() {
        if (sources.webhooks) this.set(lag(await deps.headPosition(), sources.webhooks.position));
        else this.remove();
      },
    });
    new Gauge({
      name: 'outreach_webhook_retry_queue_depth',
      help: 'Webhook deliveries this process holds waiting for a retry (or a first attempt) due later.',
      registers: [this.registry],
      collect() {
        if (sources.webhooks) this.set(sources.webhooks.queue.waitingForRetry);
        else this.remove();
      },
    });
    new Gauge({
      name: 'outreach_webhook_deliveries_held',
      help: 'Webhook deliveries this process holds: waiting, queued or in flight.',
      registers: [this.registry],
      collect() {
        if (sources.webhooks) this.set(sources.webhooks.queue.held);
        else this.remove();
      },
    });
  }

  deliveryAttempted(status: DeliveryStatus): void {
    this.deliveries.inc({ outcome: outcomeOf(status) });
  }
}

/** The metrics of one process's services (the API's, or an `outreach worker` process's). */
export function serviceMetricsOf(services: { events: Pick<EventStore, 'headPosition'>; projections: ProjectionRunner }): ServiceMetrics {
  return new ServiceMetrics({
    headPosition: () => services.events.headPosition(),
    projectionPositions: () => services.projections.projections.map((p) => [p.name, services.projections.positionOf([p.name])]),
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ServiceMetrics;
  }
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/**
 * `GET /metrics` (Prometheus text format) and the request counters behind it. With METRICS_TOKEN
 * set it needs `Authorization: Bearer <METRICS_TOKEN>`; without, it answers only loopback callers.
 */
export const metricsPlugin = fp(
  async (app: FastifyInstance) => {
    const metrics = serviceMetricsOf(app);
    app.decorate('metrics', metrics);

    app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
      const route = request.routeOptions.url ?? 'unmatched';
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
      if (INGESTION_ROUTES.has(route)) metrics.ingestions.inc({ status: labels.status });
    });

    const token = app.config.METRICS_TOKEN;
    app.get('/metrics', { schema: { hide: true } }, async function metricsEndpoint(request, reply) {
      const refused = metricsRefusal(token, request.raw, request.ip);
      if (refused) return reply.status(refused.status).headers(refused.headers).send(refused.body);
      await app.projections.refresh();
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  },
  { name: 'metrics', dependencies: ['services'] },
);

/** The refusal of a `/metrics` request as status, headers and body, or null when it may read them (metricsAllowed). */
export function metricsRefusal(token: string | undefined, message: IncomingMessage, clientAddress?: string) {
  const authorization = authorizationHeader(message);
  if (token && authorization === null) {
    return { status: 400, headers: { 'www-authenticate': 'Bearer error="invalid_request"' }, body: errorBody('VALIDATION_ERROR', SEVERAL_AUTHORIZATIONS) };
  }
  if (metricsAllowed(token, authorization ?? undefined, message.socket.remoteAddress, clientAddress)) return null;
  return { status: 401, headers: { 'www-authenticate': 'Bearer' }, body: errorBody('UNAUTHORIZED', 'Metrics need the METRICS_TOKEN bearer token.') };
}

/**
 * With a METRICS_TOKEN, its bearer header; without, loopback callers only: the socket's peer and the
 * client behind the trusted proxies (TRUST_PROXY) both loopback. Behind a reverse proxy on this host
 * every socket is loopback; the forwarded address alone is the client's word with `TRUST_PROXY=true`.
 */
export function metricsAllowed(token: string | undefined, authorization: string | undefined, socketAddress: string | undefined, clientAddress = socketAddress): boolean {
  return token ? bearerMatches(authorization, token) : LOOPBACK.test(socketAddress ?? '') && LOOPBACK.test(clientAddress ?? '');
}

/** `Bearer <token>`: the scheme in any case, one or more spaces after it (RFC 6750 §2.1); the token compared in constant time. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^bearer +(.+)$/i.exec(header ?? '');
  if (!match) return false;
  const presented = Buffer.from(match[1]!);
  const expected = Buffer.from(token);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}
