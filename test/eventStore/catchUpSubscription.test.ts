import t from 'tap';
import { type PollingSource, catchUpSubscription } from '../../src/adapters/shared/catchUpSubscription.ts';
import type { RecordedEvent } from '../../src/ports/eventStore.ts';

/**
 * The catch-up subscription every adapter shares resubscribes after an error of the underlying
 * store: it reports the error, then resumes after the last event it yielded (nothing skipped,
 * nothing yielded twice). The store here fails on demand.
 */
function flakyStore(count: number) {
  const events: RecordedEvent[] = Array.from({ length: count }, (_, i) => ({
    id: `e${i}`,
    streamId: `s-${i % 3}`,
    revision: BigInt(Math.floor(i / 3)),
    position: BigInt(i * 2 + 1), // not contiguous, as the port allows
    type: 'Happened',
    data: { i },
    metadata: {},
    createdAt: new Date(0),
  }));
  const failures = { readAll: 0, waitForNew: 0 };
  const source: PollingSource = {
    async readAll({ after = -1n, limit = 500 } = {}) {
      if (failures.readAll > 0) {
        failures.readAll--;
        throw new Error('store unreachable');
      }
      // Small pages, so a failure can fall between two pages.
      return events.filter((e) => e.position > after).slice(0, Math.min(limit, 4));
    },
    async waitForNew(_after, timeoutMs, signal) {
      if (failures.waitForNew > 0) {
        failures.waitForNew--;
        throw new Error('connection reset');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(timeoutMs, 20));
        signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    },
  };
  return { events, failures, source };
}

t.test('after read errors it resumes from the last event it yielded, with no gap and no duplicate', async (t) => {
  const { events, failures, source } = flakyStore(10);
  const controller = new AbortController();
  const errors: unknown[] = [];
  const seen: bigint[] = [];
  for await (const event of catchUpSubscription(source, { signal: controller.signal, onError: (e) => errors.push(e) })) {
    seen.push(event.position);
    if (seen.length === 2 || seen.length === 6) failures.readAll = 2; // the next page read fails twice
    if (seen.length === events.length) controller.abort();
  }
  t.same(seen, events.map((e) => e.position), 'every event once, in order');
  t.equal(errors.length, 4, 'each failure is reported');
  t.match(String(errors[0]), /store unreachable/);
});

t.test('it resumes from a stored checkpoint and survives a failing wait for new events', async (t) => {
  const { events, failures, source } = flakyStore(9);
  const controller = new AbortController();
  const errors: unknown[] = [];
  const seen: bigint[] = [];
  const checkpoint = events[4]!.position;
  failures.waitForNew = 1;
  const started = Date.now();
  for await (const event of catchUpSubscription(source, { after: checkpoint, signal: controller.signal, onError: (e) => errors.push(e) })) {
    seen.push(event.position);
    if (seen.length === 4) {
      // Caught up: the next wait fails once; afterwards a new event arrives and is delivered.
      setTimeout(() => {
        events.push({ ...events[0]!, id: 'late', position: 1000n });
        setTimeout(() => controller.abort(), 200);
      }, 50);
    }
  }
  t.same(seen, [...events.slice(5, 9).map((e) => e.position), 1000n], 'only the events after the checkpoint, then the live one');
  t.equal(errors.length, 1);
  t.match(String(errors[0]), /connection reset/);
  t.ok(Date.now() - started < 5_000);
});
