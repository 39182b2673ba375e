import fp from 'fastify-plugin';
import { serviceUnavailable } from '../domain/errors.ts';

/**
 * Reads read-your-writes style: waits until the read models include a write, bounded. `whenBehind`:
 * `refuse` (default) answers 503 after the bound; `answer` returns anyway, for a write whose answer
 * carries a secret that exists only in it (a signing secret, a client secret, tokens), where a 503
 * would lose the secret while the write stands, and for a write a retry would repeat (an ingestion:
 * the spec tells a client to retry a 503, and without an Idempotency-Key the retry ingests again).
 */
export type WaitForWrite = (position: bigint | null, whenBehind?: 'refuse' | 'answer') => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    waitForWrite: WaitForWrite;
  }
}

/**
 * `app.waitForWrite(position)`: a write route answers only once the read models include its write
 * (READ_YOUR_WRITES_TIMEOUT_MS at most; after that 503, the write itself stands, unless the answer
 * carries a secret or a retry would repeat the write: see WaitForWrite).
 */
export const readYourWrites = fp(
  async (fastify) => {
    fastify.decorate('waitForWrite', async (position: bigint | null, whenBehind: 'refuse' | 'answer' = 'refuse') => {
      if (position === null) return;
      const visible = await fastify.projections.waitFor(position, fastify.config.READ_YOUR_WRITES_TIMEOUT_MS);
      if (visible) return;
      if (whenBehind === 'answer') {
        fastify.log.warn({ position: position.toString() }, 'answered a write the read models do not include yet (a 503 would lose its secret or invite a second write)');
        return;
      }
      throw serviceUnavailable('The write is stored but the read models are behind; it will appear shortly.');
    });
  },
  { name: 'read-your-writes', dependencies: ['services'] },
);
