import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimited } from '../domain/errors.ts';
import { windowKey, windowOf } from '../ports/counterStore.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Seconds a write is counted for, at least (at most one more: it is counted by the second it was made in). */
const WINDOW_SECONDS = 60;

/**
 * The write rate tier: at most `limit` write requests (POST/PUT/PATCH/DELETE under /api/v1) per
 * team in any 60 seconds, counted in the shared counter store so every instance sees one count.
 * Counted per second: a write counts until 60 whole seconds have passed after the second it was
 * made in (60 to 61 s), so the window errs on the side of the limit, never over it, and no burst of
 * twice the limit fits across a minute boundary. A refused request is given back: it does not count.
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
  const second = Math.floor(now / 1000);
  const key = writeKey(team, second);
  const expires = new Date((second + WINDOW_SECONDS + 2) * 1000);
  // This second's count is the one this write's own increment made: concurrent writes read distinct
  // values, so of a burst exactly the limit is admitted. The other seconds are read after that
  // increment is committed, the later ones too: of two writes on either side of a second's boundary,
  // the one read last sees the other, so both cannot be admitted over the limit; and writes another
  // instance stamped by a clock up to a minute ahead of this one are counted, not missed.
  const own = await app.counters.increment(key, 1, expires);
  let counted: Array<{ key: string; count: number }>;
  try {
    counted = await app.counters.range(writeKey(team, second - WINDOW_SECONDS), writeKey(team, second + WINDOW_SECONDS));
  } catch (error) {
    // The write is refused (503 for a store failing over): it is not counted either, as far as the store lets this say so.
    await app.counters.increment(key, -1, expires).catch(() => {});
    throw error;
  }
  // The others: this second's count less this write.
  const others = counted.map(({ key, count }) => {
    const at = windowOf(key);
    return [at, at === second ? own - 1 : count] as const;
  });
  const retryAfterMs = writeRetryAfterMs({ limit, others, nowMs: now });
  if (retryAfterMs > 0) {
    await app.counters.increment(key, -1, expires);
    throw rateLimited(retryAfterMs / 1000, `Write rate limit of ${limit} requests per minute exceeded for this team.`);
  }
}

const writeKey = (team: string, second: number) => windowKey(`writes:${team}`, second);

/**
 * 0 when one more write fits beside the `others` counted in the window (second → writes, oldest
 * first); otherwise the milliseconds until enough of them have left it. A second's writes leave the
 * window when 61 seconds have begun after it.
 */
export function writeRetryAfterMs(input: { limit: number; others: ReadonlyArray<readonly [second: number, writes: number]>; nowMs: number }): number {
  const { limit, others, nowMs } = input;
  let total = others.reduce((sum, [, writes]) => sum + writes, 0) + 1;
  if (total <= limit) return 0;
  let leavesAt = nowMs;
  for (const [second, writes] of others) {
    total -= writes;
    leavesAt = (second + WINDOW_SECONDS + 1) * 1000;
    if (total <= limit) break;
  }
  return Math.max(1, leavesAt - nowMs);
}
