import type { FastifyInstance } from 'fastify';
import t from 'tap';
import { countWrite, writeRetryAfterMs } from '../../src/http/writeRateLimit.ts';
import { tempCounterStore } from '../helpers/tempCounterStore.ts';

const at = (second: number, ms = 0) => second * 1000 + ms;

t.test('write window: one more write fits beside the others counted, each second counted until 61 seconds have begun after it', async (t) => {
  t.equal(writeRetryAfterMs({ limit: 60, others: [[10, 59]], nowMs: at(10, 500) }), 0, 'the 60th write is admitted');
  t.equal(writeRetryAfterMs({ limit: 60, others: [[10, 60]], nowMs: at(10, 500) }), 60_500, 'the 61st waits until second 71 begins');
  t.equal(writeRetryAfterMs({ limit: 60, others: [[10, 30], [40, 30]], nowMs: at(50) }), 21_000, 'only as long as the oldest second needs to leave');
  t.equal(writeRetryAfterMs({ limit: 60, others: [[10, 1], [11, 1], [40, 59]], nowMs: at(50) }), 22_000, 'several old seconds: until enough have left');
  t.equal(writeRetryAfterMs({ limit: 60, others: [[10, 60], [70, 0]], nowMs: at(70, 999) }), 1, 'the last millisecond before it leaves');
  t.equal(writeRetryAfterMs({ limit: 3, others: [[5, 2], [6, 1]], nowMs: at(6, 250) }), 59_750, 'Retry-After is whole: never 0 ms');
  t.equal(writeRetryAfterMs({ limit: 60, others: [], nowMs: at(1) }), 0, 'nothing counted');
  t.equal(
    writeRetryAfterMs({ limit: 20, others: [[0, 0], [10, 20]], nowMs: at(0) }),
    71_000,
    "another instance's writes stamped ahead: this write's own second leaving frees nothing, theirs must leave",
  );
});

t.test('a write whose window cannot be read (the counter store failing over) is refused and not counted', async (t) => {
  const now = Date.parse('2026-11-29T10:00:10.000Z');
  const store = tempCounterStore(t, () => now);
  const outage = Object.assign(new Error('server selection timed out'), { name: 'MongoServerSelectionError' });
  let failing = true;
  const counters = {
    increment: (key: string, by: number, expiresAt: Date) => store.increment(key, by, expiresAt),
    range: (from: string, to: string) => (failing ? Promise.reject(outage) : store.range(from, to)),
  };
  const app = { clock: { now: () => new Date(now) }, counters } as unknown as FastifyInstance;
  await t.rejects(countWrite(app, 'team-1', 2), outage, 'the failure reaches the caller (503 there)');
  failing = false;
  t.same((await store.range('writes:team-1:', 'writes:team-1;')).map(({ count }) => count), [0], 'its increment was taken back');
  await countWrite(app, 'team-1', 2);
  await countWrite(app, 'team-1', 2);
  await t.rejects(countWrite(app, 'team-1', 2), { code: 'RATE_LIMITED' }, 'the limit is whole for the writes that were admitted');
});
