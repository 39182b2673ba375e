// Scale-out: a stopped copy's pending deliveries are taken over by one of the live copies, not by
// each of them. Taking over writes nothing to the stream until the taker's first attempt, so every
// live copy saw them still held by the silent one (from a review: 19 POSTs for 10 events).
import t from 'tap';
import { sleep, stoppedCopyWithPending } from './helpers.ts';

t.test("a stopped copy's deliveries are taken over by only one of two live copies", async (t) => {
  const opts = { workerId: 'copy-1', timeoutMs: 1000, orphanAfterMs: 1500, concurrencyPerSubscription: 1, connectionsPerDestination: 1 };
  // Most of the 10 still pending under copy-1's name.
  const { got, maxInFlight, copy } = await stoppedCopyWithPending(t, opts, 10, 700);
  const copies = ['copy-2', 'copy-3'].map(copy);
  for (const c of copies) await c.start();
  t.teardown(() => Promise.all(copies.map((c) => c.stop())));
  for (const deadline = Date.now() + 30_000; new Set(got).size < 10 && Date.now() < deadline; ) await sleep(50);
  await sleep(3_000);
  t.equal(new Set(got).size, 10, 'every event delivered');
  t.equal(got.length, 10, 'each event POSTed once');
  // The per-subscription bound is per copy: two live copies may each send one of the taken-over deliveries.
  t.ok(maxInFlight() <= 2, `at most one in flight per copy (${maxInFlight()})`);
});
