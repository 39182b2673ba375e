import type { FastifyInstance } from 'fastify';
import { serviceUnavailable } from '../domain/errors.ts';

/**
 * Requests that arrive while the server closes (on a keep-alive connection, or pipelined) get the
 * service's 503 SERVICE_UNAVAILABLE with `Retry-After`: fastify's own answer (`return503OnClosing`,
 * turned off in serverOptions) had another body and no Retry-After.
 */
export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    throw serviceUnavailable('The service is shutting down; retry (another instance, or this one once it is back).', 1);
  });
}
