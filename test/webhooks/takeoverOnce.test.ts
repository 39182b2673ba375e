// Scale-out: a stopped copy's pending deliveries are taken over by one of the live copies, not by
// each of them. Taking over writes nothing to the stream until the taker's first attempt, so every
// live copy saw them still held by the silent one (from a review: 19 POSTs for 10 events).
import t from 'tap';
import { WebhookDeliveryWorker, workerOptionsFrom } from '../../src/processors/webhookDelivery/worker.ts';
import { messageReceived, sleep, startHarness, startSlowReceiver } from './helpers.ts';

t.test("a stopped copy's deliveries are taken over by only one of two live copies", async (t) => {
  const opts = { workerId: 'copy-1', timeoutMs: 1000, orphanAfterMs: 1500, concurrencyPerSubscription: 1, connectionsPerDestination: 1 };
  const h = await startHarness({ worker: opts });
  t.teardown(() => h.close());
  const { url, got, maxInFlight } = await startSlowReceiver(t, 300);
  await h.subscribe(url, ['outreach.message_received']);
  let last = 0n;
  for (let i = 0; i < 10; i++) last = await h.append(messageReceived(h.tenant, 700 + i));
  t.ok(await h.worker.waitForPosition(last, 5_000));
  await sleep(100);
  await h.worker.stop(); // most of the 10 still pending under copy-1's name
  const copies = ['copy-2', 'copy-3'].map((id) => new WebhookDeliveryWorker(h.app.services, { ...workerOptionsFrom(h.app.config), ...opts, workerId: id }));
  for (const copy of copies) await copy.start();
  t.teardown(() => Promise.all(copies.map((copy) => copy.stop())));
  for (const deadline = Date.now() + 30_000; new Set(got).size < 10 && Date.now() < deadline; ) await sleep(50);
  await sleep(3_000);
  t.equal(new Set(got).size, 10, 'every event delivered');
  t.equal(got.length, 10, 'each event POSTed once');
  // The per-subscription bound is per copy: two live copies may each send one of the taken-over deliveries.
  t.ok(maxInFlight() <= 2, `at most one in flight per copy (${maxInFlight()})`);
});
