import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Services } from '../services.ts';
import { errorBody } from './errorHandler.ts';
import { type ServiceMetrics, metricsRefusal, serviceMetricsOf } from './metrics.ts';

export interface WorkerMetricsServer {
  metrics: ServiceMetrics;
  /** `http://host:port` it listens on. */
  url: string;
  close(): Promise<void>;
}

/**
 * `GET /metrics` for an `outreach worker …` process (`--metrics-port`), which serves no API: the
 * same registry and access rule as the API's (METRICS_TOKEN bearer, else loopback callers only).
 */
export async function serveWorkerMetrics(services: Services, port: number, host: string): Promise<WorkerMetricsServer> {
  const metrics = serviceMetricsOf(services);
  const token = services.config.METRICS_TOKEN;
  const server = createServer((request, response) => {
    const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) =>
      response.writeHead(status, { 'content-type': type, ...headers }).end(body);
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || request.method !== 'GET') {
      return send(404, 'application/json', JSON.stringify(errorBody('NOT_FOUND', `Route ${request.method} ${path} not found; a worker serves only GET /metrics.`)));
    }
    const refused = metricsRefusal(token, request);
    if (refused) return send(refused.status, 'application/json', JSON.stringify(refused.body), refused.headers);
    services.projections
      .refresh()
      .then(() => metrics.registry.metrics())
      .then(
        (text) => send(200, metrics.registry.contentType, text),
        () => send(500, 'application/json', JSON.stringify(errorBody('INTERNAL_ERROR', 'Metrics could not be collected.'))),
      );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    metrics,
    url: `http://${shown}:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
