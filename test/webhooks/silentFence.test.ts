// Scale-out with a counter store shared across hosts (MongoDB): a copy whose beats do not reach it
// looks silent to the others, which take its deliveries over. Before, it went on sending them too
// (from a review: 20 POSTs for 12 events). It now holds its attempts while it may look silent, and
// after such a time checks each held delivery for another copy's claim before attempting it.
import t from 'tap';
import { WebhookDeliveryWorker, workerOptionsFrom } from '../../src/processors/webhookDelivery/worker.ts';
import { messageReceived, sleep, startHarness, startSlowReceiver } from './helpers.ts';

const opts = { timeoutMs: 1000, orphanAfterMs: 1500, concurrencyPerSubscription: 1, connectionsPerDestination: 1, fenceWhenSilent: true };
const unreachable = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { name: 'MongoNetworkError' }));

/** The harness's counter store, unreachable while `down`. */
function cutOff(store: { increment(key: string, by: number, expiresAt: Date): Promise<number>; range(from: string, to: string): Promise<Array<{ key: string; count: number }>> }) {
  const link = { down: true };
  const counters = {
    increment: (key: string, by: number, expiresAt: Date) => (link.down ? unreachable() : store.increment(key, by, expiresAt)),
    range: (from: string, to: string) => (link.down ? unreachable() : store.range(from, to)),
  };
  return { link, counters };
}

t.test('a copy that cannot reach the shared counter store sends nothing; a copy that can takes its deliveries over, each sent once, also after the first reaches the store again', async (t) => {
  const h = await startHarness({ worker: { ...opts, workerId: 'copy-0' } });
  t.teardown(() => h.close());
  await h.worker.stop();
  const { link, counters } = cutOff(h.app.services.counters);
  const cut = new WebhookDeliveryWorker({ ...h.app.services, counters }, { ...workerOptionsFrom(h.app.config), ...opts, workerId: 'copy-1' });
  await cut.start();
  t.teardown(() => cut.stop());
  const { url, got } = await startSlowReceiver(t, 400);
  await h.subscribe(url, ['outreach.message_received']);
  let last = 0n;
  for (let i = 0; i < 12; i++) last = await h.append(messageReceived(h.tenant, 500 + i));
  t.ok(await cut.waitForPosition(last, 5_000), 'copy-1 claimed all 12');
  await sleep(1_800);
  t.equal(got.length, 0, 'copy-1 sent none while its beats did not reach the store');
  const other = new WebhookDeliveryWorker(h.app.services, { ...workerOptionsFrom(h.app.config), ...opts, workerId: 'copy-2' });
  await other.start();
  t.teardown(() => other.stop());
  for (const deadline = Date.now() + 20_000; new Set(got).size < 12 && Date.now() < deadline; ) await sleep(50);
  await sleep(1_500);
  t.equal(new Set(got).size, 12, 'every event delivered');
  t.equal(got.length, 12, 'each event POSTed once');
  await other.stop();
  await sleep(2_000); // the taker is silent: its marks count no more
  link.down = false; // copy-1 reaches the store again
  await sleep(3_000);
  t.equal(got.length, 12, 'copy-1 sends none of what the stopped taker delivered');
});

t.test('a copy alone whose counter store comes back delivers what it held, once', async (t) => {
  const h = await startHarness({ worker: { ...opts, workerId: 'copy-0' } });
  t.teardown(() => h.close());
  await h.worker.stop();
  const { link, counters } = cutOff(h.app.services.counters);
  const copy = new WebhookDeliveryWorker({ ...h.app.services, counters }, { ...workerOptionsFrom(h.app.config), ...opts, workerId: 'copy-1' });
  await copy.start();
  t.teardown(() => copy.stop());
  const { url, got } = await startSlowReceiver(t, 50);
  await h.subscribe(url, ['outreach.message_received']);
  let last = 0n;
  for (let i = 0; i < 5; i++) last = await h.append(messageReceived(h.tenant, 600 + i));
  t.ok(await copy.waitForPosition(last, 5_000));
  await sleep(1_000);
  t.equal(got.length, 0, 'nothing sent while the store is unreachable');
  link.down = false;
  for (const deadline = Date.now() + 10_000; new Set(got).size < 5 && Date.now() < deadline; ) await sleep(50);
  t.equal(new Set(got).size, 5, 'all delivered once the store is back');
  t.equal(got.length, 5, 'each once');
});
