// @ts-check
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(16 * 512);
let offset = pool.length;

/**
 * A new event id: a UUID version 7 (RFC 9562), the creation time in milliseconds followed by 74
 * random bits. Ids made close in time sort close together, so the unique index on `events.id` grows
 * at its right edge: with random (version 4) ids every event of a commit dirtied its own index page,
 * and each such page was written to the WAL in full, which cost more than the rest of the append.
 * @param {number} [now] epoch milliseconds
 */
export function newEventId(now = Date.now()) {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 16);
  offset += 16;
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
