// Scale-out: a copy that took deliveries over and stopped before attempting them, then started again
// under its name while the original holder was running again, left them held by no one: the holder
// left them to the taker's mark, and the taker, seeing the holder alive, took nothing (from a review:
// 2 of 10 events delivered). The taker now holds what it marked.
import t from 'tap';
import { sleep, stoppedCopyWithPending } from './helpers.ts';

t.test('a taker started again under its name holds the deliveries it claimed, while their first holder runs again', async (t) => {
  const opts = { workerId: 'copy-1', timeoutMs: 1000, orphanAfterMs: 1500, concurrencyPerSubscription: 1, connectionsPerDestination: 1 };
  // Most of the 10 still pending under copy-1's name.
  const { got, copy } = await stoppedCopyWithPending(t, opts, 10, 700);
  const taker = copy('copy-2');
  await taker.start();
  const before = got.length;
  for (const deadline = Date.now() + 15_000; got.length === before && Date.now() < deadline; ) await sleep(10);
  t.ok(taker.queue.held > 1, `copy-2 took the rest over (${JSON.stringify(taker.queue)})`);
  await taker.stop(0); // before attempting most of them
  const again = [copy('copy-1'), copy('copy-2')];
  for (const c of again) await c.start();
  t.teardown(() => Promise.all(again.map((c) => c.stop())));
  for (const deadline = Date.now() + 30_000; new Set(got).size < 10 && Date.now() < deadline; ) await sleep(50);
  t.equal(new Set(got).size, 10, `every event delivered (${got.length} POSTs)`);
});
