import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimited } from '../domain/errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { CounterStore } from '../ports/counterStore.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const WINDOW_MS = 60_000;

/**
 * The write rate tier: at most `limit` write requests (POST/PUT/PATCH/DELETE under /api/v1) per
 * team per clock minute, counted in the shared counter store so every instance sees one count.
 * Runs after `authenticate` (it needs the credential's team); over the limit it answers 429
 * RATE_LIMITED with Retry-After = seconds to the next minute.
 */
export const writeRateLimit = fp(
  async (app: FastifyInstance, opts: { counters: CounterStore; clock: Clock; limit: number }) => {
    app.addHook('onRequest', async (request: FastifyRequest) => {
      if (!WRITE_METHODS.has(request.method) || !request.url.startsWith('/api/v1/') || !request.credential) return;
      const now = opts.clock.now().getTime();
      const window = Math.floor(now / WINDOW_MS);
      const windowEnd = (window + 1) * WINDOW_MS;
      const count = await opts.counters.increment(`writes:${request.credential.teamId}:${window}`, 1, new Date(windowEnd + WINDOW_MS));
      if (count > opts.limit) {
        throw rateLimited((windowEnd - now) / 1000, `Write rate limit of ${opts.limit} requests per minute exceeded for this team.`);
      }
    });
  },
  { name: 'write-rate-limit', dependencies: ['authenticate'] },
);
