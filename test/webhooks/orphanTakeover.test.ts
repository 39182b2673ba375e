// Scale-out: a pending delivery is taken over by another worker copy only when the copy holding it
// has stopped. A delivery due long ago may still be queued in a live copy, waiting for a slot
// behind a slow destination: taking it then sent it twice and broke the per-subscription bound.
import t from 'tap';
import { WebhookDeliveryWorker, workerOptionsFrom } from '../../src/processors/webhookDelivery/worker.ts';
import { messageReceived, sleep, startHarness, startReceiver, startSlowReceiver } from './helpers.ts';

const attemptsIn = async (h: Awaited<ReturnType<typeof startHarness>>) =>
  (await h.app.services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'DeliveryAttempted').map((e) => e.data as { deliveryId: string; status: string; workerId: string });

t.test('deliveries queued in a live copy are not taken over by another copy', async (t) => {
  const opts = { workerId: 'copy-1', timeoutMs: 1000, orphanAfterMs: 1500, concurrencyPerSubscription: 1, connectionsPerDestination: 1 };
  const h = await startHarness({ worker: opts });
  t.teardown(() => h.close());
  // A slow but healthy receiver: 204 after 400 ms, well inside the timeout; 12 deliveries take ~5 s one at a time.
  const { url, got, maxInFlight } = await startSlowReceiver(t, 400);
  await h.subscribe(url, ['outreach.message_received']);

  let last = 0n;
  for (let i = 0; i < 12; i++) last = await h.append(messageReceived(h.tenant, 500 + i));
  t.ok(await h.worker.waitForPosition(last, 5_000), 'copy-1 claimed all 12');
  await sleep(1_800); // the queued ones are now due for longer than the takeover time
  const second = new WebhookDeliveryWorker(h.app.services, { ...workerOptionsFrom(h.app.config), ...opts, workerId: 'copy-2' });
  await second.start();
  t.teardown(() => second.stop());

  for (const deadline = Date.now() + 15_000; new Set(got).size < 12 && Date.now() < deadline; ) await sleep(50);
  await sleep(1_500); // a second copy's scan runs every 750 ms
  const attempts = await attemptsIn(h);
  t.same(attempts.filter((a) => a.status !== 'ok'), [], 'no attempt failed (a retry would explain a second POST)');
  t.equal(got.length, 12, 'each event POSTed once');
  t.equal(new Set(got).size, 12);
  t.equal(maxInFlight(), 1, 'WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION=1 holds across the copies');
  t.same([...new Set(attempts.map((a) => a.workerId))], ['copy-1'], 'the copy that claimed them sent them');
});

t.test('a retry left by a stopped copy is taken over by a running one', async (t) => {
  const opts = { orphanAfterMs: 1000, retry: { maxRetries: 3, baseMs: 300, factor: 1, jitter: 0 } };
  const h = await startHarness({ worker: { ...opts, workerId: 'copy-1' } });
  t.teardown(() => h.close());
  // Each copy's last heartbeat (the liveness key names the copy): silence is counted from there.
  const lastBeat = new Map<string, number>();
  const counters: typeof h.app.services.counters = Object.create(h.app.services.counters);
  counters.increment = async (key, by, expiresAt) => {
    const counted = await h.app.services.counters.increment(key, by, expiresAt);
    const copy = /webhook-worker-alive:(copy-\d)/.exec(key)?.[1];
    if (copy && by > 0) lastBeat.set(copy, Date.now());
    return counted;
  };
  await h.worker.stop();
  const first = new WebhookDeliveryWorker({ ...h.app.services, counters }, { ...workerOptionsFrom(h.app.config), ...opts, workerId: 'copy-1' });
  await first.start();
  t.teardown(() => first.stop());
  const second = new WebhookDeliveryWorker({ ...h.app.services, counters }, { ...workerOptionsFrom(h.app.config), ...opts, workerId: 'copy-2' });
  await second.start();
  t.teardown(() => second.stop());
  const receiver = await startReceiver((_, n) => (n === 1 ? 500 : 200));
  t.teardown(() => receiver.close());
  await h.subscribe(receiver.url, ['outreach.message_received']);
  await h.append(messageReceived(h.tenant, 900));
  await receiver.waitFor((r) => r.length === 1);
  // The attempt is recorded just after the receiver answers it.
  for (const deadline = Date.now() + 5_000; (await attemptsIn(h)).length < 1 && Date.now() < deadline; ) await sleep(20);
  const firstBy = (await attemptsIn(h))[0]?.workerId;
  t.ok(firstBy === 'copy-1' || firstBy === 'copy-2', `the failed attempt is recorded (by ${firstBy})`);
  if (firstBy === 'copy-2') {
    // Either copy may claim it: make copy-1 the one that sent first is not in the test's hands, so stop the other.
    t.comment('copy-2 claimed the delivery; stopping it instead');
    await second.stop();
  } else {
    await first.stop();
  }
  // Measured from its last beat, not from stop's return: under load a beat can lag the stop by hundreds of ms.
  const silentSince = lastBeat.get(firstBy!)!;
  await receiver.waitFor((r) => r.length === 2, 10_000);
  const waited = Date.now() - silentSince;
  // The attempt is recorded just after the receiver answers it.
  let attempts = await attemptsIn(h);
  for (const deadline = Date.now() + 5_000; attempts.length < 2 && Date.now() < deadline; attempts = await attemptsIn(h)) await sleep(20);
  t.equal(attempts.length, 2);
  t.not(attempts[1]!.workerId, firstBy, 'sent by the copy still running');
  t.equal(receiver.received[1]!.json.id, receiver.received[0]!.json.id, 'the same delivery, retried');
  t.ok(waited >= 500, `not before the stopped copy has been silent a while (${waited} ms)`);
});

t.test('a counter store that fails does not stop delivering: liveness is only needed to take over other copies\' deliveries', async (t) => {
  const h = await startHarness({ worker: { workerId: 'copy-1' } });
  t.teardown(() => h.close());
  await h.worker.stop();
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  await h.subscribe(receiver.url, ['outreach.message_received']);
  // As the SQLite counter store fails past its busy wait (another process holding the file's lock).
  const busy = () => Promise.reject(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }));
  const failing = { increment: busy, range: busy };
  const worker = new WebhookDeliveryWorker({ ...h.app.services, counters: failing as never }, { ...workerOptionsFrom(h.app.config), workerId: 'copy-2' });
  t.teardown(() => worker.stop());
  let startError: unknown = null;
  await worker.start().catch((error: unknown) => (startError = error));
  t.equal(startError, null, 'started');
  await h.append(messageReceived(h.tenant, 42));
  await receiver.waitFor((r) => r.length === 1, 5_000).catch(() => {});
  t.equal(receiver.received.length, 1, 'delivered');
});
