import fp from 'fastify-plugin';
import { serviceUnavailable } from '../domain/errors.ts';

/** Reads read-your-writes style: waits until the read models include a write, bounded. */
export type WaitForWrite = (position: bigint | null) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    waitForWrite: WaitForWrite;
  }
}

/**
 * `app.waitForWrite(position)`: a write route answers only once the read models include its write
 * (READ_YOUR_WRITES_TIMEOUT_MS at most; after that 503, the write itself stands).
 */
export const readYourWrites = fp(
  async (fastify) => {
    fastify.decorate('waitForWrite', async (position: bigint | null) => {
      if (position === null) return;
      const visible = await fastify.projections.waitFor(position, fastify.config.READ_YOUR_WRITES_TIMEOUT_MS);
      if (!visible) throw serviceUnavailable('The write is stored but the read models are behind; it will appear shortly.');
    });
  },
  { name: 'read-your-writes', dependencies: ['services'] },
);
