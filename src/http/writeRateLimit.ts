import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimited } from '../domain/errors.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const WINDOW_MS = 60_000;

/**
 * The write rate tier: at most `limit` write requests (POST/PUT/PATCH/DELETE under /api/v1) per
 * team in any 60 seconds, counted in the shared counter store so every instance sees one count.
 * A sliding window, estimated from the current and the previous clock minute (the previous one
 * weighted by how much of it still lies within the last 60 seconds), so no burst of twice the
 * limit fits across a minute boundary. A refused request is given back: it does not count.
 * Runs after `authenticate` (it needs the credential's team); over the limit it answers 429
 * RATE_LIMITED with Retry-After = seconds until a request would be admitted.
 */
export const writeRateLimit = fp(
  async (app: FastifyInstance, opts: { limit: number }) => {
    app.addHook('onRequest', async (request: FastifyRequest) => {
      // The matched route, not the raw URL: the router decodes percent-escapes, so `/%61pi/v1/…` reaches an /api/v1 route.
      if (!WRITE_METHODS.has(request.method) || !request.routeOptions.url?.startsWith('/api/v1/') || !request.credential) return;
      await countWrite(app, request.credential.teamId, opts.limit);
    });
  },
  { name: 'write-rate-limit', dependencies: ['authenticate', 'services', 'ingestion-ports'] },
);

/** Counts one write of the team in the write tier, or throws 429 RATE_LIMITED (the refused write is not counted). Also used by MCP write tools. */
export async function countWrite(app: FastifyInstance, team: string, limit: number): Promise<void> {
  const now = app.clock.now().getTime();
  const window = Math.floor(now / WINDOW_MS);
  const windowStart = window * WINDOW_MS;
  const expires = new Date(windowStart + 3 * WINDOW_MS);
  const key = `writes:${team}:${window}`;
  // Asked together so they share one commit of the counter store (the previous minute is closed).
  const [count, previous] = await Promise.all([app.counters.increment(key, 1, expires), app.counters.increment(`writes:${team}:${window - 1}`, 0, expires)]);
  const retryAfterMs = writeRetryAfterMs({ limit, previous, count, elapsedMs: now - windowStart });
  if (retryAfterMs > 0) {
    await app.counters.increment(key, -1, expires);
    throw rateLimited(retryAfterMs / 1000, `Write rate limit of ${limit} requests per minute exceeded for this team.`);
  }
}

/**
 * 0 when a request that made the current minute's count `count` is within the limit; otherwise
 * how long until the sliding estimate `previous × (1 − elapsed/60 s) + count` would admit it.
 */
export function writeRetryAfterMs(input: { limit: number; previous: number; count: number; elapsedMs: number }): number {
  const { limit, previous, count, elapsedMs } = input;
  const remaining = 1 - elapsedMs / WINDOW_MS;
  if (previous * remaining + count <= limit) return 0;
  if (count <= limit && previous > 0) {
    // The previous minute's share must shrink: previous × (1 − f) + count ≤ limit.
    // (written so that whole-millisecond answers stay exact: no 1 − x/y in floating point)
    return Math.max(1, Math.ceil((WINDOW_MS * (previous - limit + count)) / previous) - elapsedMs);
  }
  // This minute alone is over: wait for the next one, then for this minute's share to shrink.
  const intoNext = count > limit ? Math.ceil((WINDOW_MS * (count - limit)) / (count - 1)) : 0;
  return Math.max(1, WINDOW_MS - elapsedMs + intoNext);
}
