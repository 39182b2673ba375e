/**
 * The webhook dispatcher follows the whole log. Pages it acts on nothing in (the deliveries' own
 * records, which wake it after every attempt, and events of sites nobody subscribed for) do not cost
 * a read-model commit each: its checkpoint moves in memory and is stored once the log goes idle (or
 * every few seconds, or at stop). Pages with claims are still stored before the next is read.
 */
import t from 'tap';
import type { ReadModelStore } from '../../src/ports/readModelStore.ts';
import { DISPATCHER } from '../../src/processors/webhookDelivery/dispatcher.ts';
import { WebhookDeliveryWorker, workerOptionsFrom } from '../../src/processors/webhookDelivery/worker.ts';
import { messageReceived, sleep, startHarness, startReceiver } from './helpers.ts';

t.test('pages with nothing to claim cost no commit each; the stored checkpoint still reaches the head; claimed events are delivered once', async (t) => {
  const h = await startHarness({ worker: { workerId: 'harness' } });
  t.teardown(() => h.close());
  await h.worker.stop(); // only the counted copy below runs
  const s = h.app.services;
  const commits: Array<{ from: bigint; to: bigint }> = [];
  const readModels: ReadModelStore = Object.create(s.readModels);
  readModels.applyBatch = (projection, version, from, to, apply) => {
    if (projection === DISPATCHER) commits.push({ from, to });
    return s.readModels.applyBatch(projection, version, from, to, apply);
  };
  const worker = new WebhookDeliveryWorker({ ...s, readModels }, { ...workerOptionsFrom(h.app.config), workerId: 'counted' });
  await worker.start();
  let stopped = false;
  t.teardown(() => (stopped ? undefined : worker.stop()));
  const stored = async () => (await s.readModels.getCheckpoint(DISPATCHER))?.position ?? -1n;

  const receiver = await startReceiver(() => 204);
  t.teardown(() => receiver.close());
  await h.subscribe(receiver.url, ['outreach.message_received']);
  const nobody = { siteId: 'site_nobody_subscribed', teamId: 'team_nobody' };
  t.ok(await worker.waitForPosition(await s.events.headPosition(), 5_000));

  commits.length = 0;
  const OTHER = 40;
  const CLAIMED = 5;
  for (let i = 0; i < OTHER; i++) {
    await h.append(messageReceived(nobody, i));
    // Every few: one the subscription wants, whose delivery records wake the dispatcher again.
    if (i % (OTHER / CLAIMED) === 0) await h.append(messageReceived(h.tenant, i));
    await sleep(10);
  }
  await receiver.waitFor((r) => r.length >= CLAIMED);
  // The last attempt's record may be appended after its receipt: the head is read once it stays put.
  let head = await s.events.headPosition();
  for (let i = 0; i < 200 && (await stored()) !== head; i++) {
    await sleep(25);
    head = await s.events.headPosition();
  }
  t.ok(await worker.waitForPosition(head, 5_000), 'the dispatcher is past the head in memory');
  t.equal(await stored(), head, 'the stored checkpoint reached the head once the log went idle');
  t.comment(`dispatcher commits for ${OTHER} unclaimed and ${CLAIMED} claimed appends (and their delivery records): ${commits.length}`);
  // Before: one per page read, more than one per append here. Now: one per claimed page, the idle store, at most one more per 5 s.
  t.ok(commits.length <= 2 * CLAIMED + 3, `${commits.length} commits`);
  t.ok(
    commits.every((c, i) => i === 0 || c.from === commits[i - 1]!.to),
    'each commit starts where the stored checkpoint was (compare-and-set on the stored one, not the one in memory)',
  );

  // Past events nobody acts on, then stopped: the checkpoint is stored at stop, and a restart delivers nothing twice.
  for (let i = 0; i < 10; i++) await h.append(messageReceived(nobody, 100 + i));
  const last = await s.events.headPosition();
  t.ok(await worker.waitForPosition(last, 5_000));
  await worker.stop();
  stopped = true;
  t.equal(await stored(), last, 'stored at stop');
  const again = new WebhookDeliveryWorker(s, { ...workerOptionsFrom(h.app.config), workerId: 'again' });
  await again.start();
  t.teardown(() => again.stop());
  const p = await h.append(messageReceived(h.tenant, 999));
  t.ok(await again.waitForPosition(p, 5_000));
  await receiver.waitFor((r) => r.length >= CLAIMED + 1);
  await sleep(300);
  const ids = receiver.received.map((r) => r.json.id as string);
  t.equal(ids.length, CLAIMED + 1, 'each claimed event delivered once');
  t.equal(new Set(ids).size, ids.length, 'no duplicate');
});
