import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { deliveriesStream } from '../../src/domain/webhookDelivery.ts';
import type { WebhookDeliveryDoc } from '../../src/readModels/webhookDeliveries.ts';
import type { WebhookSubscriptionDoc } from '../../src/readModels/webhookSubscriptions.ts';
import { bearer } from '../helpers/testApp.ts';
import { type Harness, independentlyVerify, messageReceived, sleep, startHarness, startReceiver } from './helpers.ts';

async function settled(h: Harness) {
  await h.app.services.projections.waitFor(await h.app.services.events.headPosition(), 5_000);
}
async function subscription(h: Harness, id: string) {
  await settled(h);
  return (await h.app.services.readModels.get<WebhookSubscriptionDoc>('webhookSubscriptions', id))!;
}
async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
const failedCount = async (h: Harness, subId: string) =>
  (await h.app.services.events.readStream(deliveriesStream(subId))).filter((e) => e.type === 'DeliveryFailed').length;

t.test('a failed attempt is retried with the same id and body; every attempt is recorded', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const receiver = await startReceiver((_r, n) => (n <= 2 ? 500 : 200));
  t.teardown(() => receiver.close());
  const sub = await h.subscribe(receiver.url, ['outreach.message_received']);
  await h.append(messageReceived(h.tenant, 1));
  await receiver.waitFor((r) => r.length >= 3);
  await sleep(100);
  t.equal(receiver.received.length, 3, 'two failures, then success: three attempts');
  const [first, ...rest] = receiver.received;
  for (const r of rest) {
    t.ok(r.rawBody.equals(first!.rawBody), 'identical body bytes on every attempt');
    t.equal(r.json.id, first!.json.id, 'identical id');
  }
  for (const r of receiver.received) t.ok(independentlyVerify(r, sub.secret), 'each attempt signed');

  await settled(h);
  const docs = await h.app.services.readModels.find<WebhookDeliveryDoc>('webhookDeliveries', { subscription_id: sub.id });
  t.equal(docs.length, 1);
  t.equal(docs[0]!.state, 'succeeded');
  t.same(docs[0]!.attempts.map((a) => [a.attempt, a.status, a.status_code]), [[1, 'http_500', 500], [2, 'http_500', 500], [3, 'ok', 200]]);
  t.ok(docs[0]!.attempts.every((a) => typeof a.duration_ms === 'number' && a.duration_ms >= 0), 'durations recorded');
  const s = await subscription(h, sub.id);
  t.equal(s.last_delivery_status, 'ok');
  t.equal(s.consecutive_failures, 0);

  const { stdout } = await promisify(execFile)(process.execPath, ['bin/outreach.js', '--json', 'webhooks', 'deliveries', sub.id], {
    env: { ...process.env, DATA_DIR: h.app.dataDir, LOG_LEVEL: 'silent' },
  });
  const printed = JSON.parse(stdout.trim().split('\n').pop()!);
  t.equal(printed.deliveries.length, 1, 'the CLI prints the delivery');
  t.same(printed.deliveries[0].attempts.map((a: any) => a.status), ['http_500', 'http_500', 'ok']);
  t.equal(printed.deliveries[0].webhookId, first!.json.id);
});

t.test('retries are used up: the delivery fails after 1 + 3 attempts', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const receiver = await startReceiver(() => 503);
  t.teardown(() => receiver.close());
  const sub = await h.subscribe(receiver.url, ['outreach.message_received']);
  await h.append(messageReceived(h.tenant, 2));
  await waitUntil('the delivery to fail', async () => (await failedCount(h, sub.id)) === 1);
  await sleep(300);
  t.equal(receiver.received.length, 4, 'first attempt plus three retries, no more');
  const s = await subscription(h, sub.id);
  t.equal(s.consecutive_failures, 1);
  t.equal(s.last_delivery_status, 'http_503');
  t.equal(s.is_active, true);
});

t.test('auto-disable after exactly 10 failed deliveries, not after 9; then nothing more is sent', async (t) => {
  const h = await startHarness({ env: { WEBHOOK_RETRY_BASE_MS: '5' } });
  t.teardown(() => h.close());
  const receiver = await startReceiver(() => 500);
  t.teardown(() => receiver.close());
  const sub = await h.subscribe(receiver.url, ['outreach.message_received']);
  for (let i = 0; i < 9; i++) await h.append(messageReceived(h.tenant, 100 + i));
  await waitUntil('nine failed deliveries', async () => (await failedCount(h, sub.id)) === 9);
  let s = await subscription(h, sub.id);
  t.equal(s.consecutive_failures, 9);
  t.equal(s.is_active, true, 'still active after 9');

  await h.append(messageReceived(h.tenant, 109));
  await waitUntil('the tenth failure', async () => (await failedCount(h, sub.id)) === 10);
  await waitUntil('auto-disable', async () => (await subscription(h, sub.id)).is_active === false);
  s = await subscription(h, sub.id);
  t.equal(s.consecutive_failures, 10);
  t.equal(s.is_active, false, 'auto-disabled at 10');
  const list = await h.app.fastify.inject({ method: 'GET', url: `/api/v1/sites/${h.tenant.siteId}/outreach/webhooks`, headers: bearer(h.tenant.key) });
  t.equal(list.json().subscriptions[0].is_active, false, 'the API shows is_active false');

  const before = receiver.received.length;
  t.equal(before, 40, '10 deliveries x 4 attempts');
  const p = await h.append(messageReceived(h.tenant, 110));
  await h.worker.waitForPosition(p, 5_000);
  await sleep(300);
  t.equal(receiver.received.length, before, 'no delivery to a disabled subscription');
});

t.test('a 2xx resets consecutive_failures to 0', async (t) => {
  const h = await startHarness({ env: { WEBHOOK_MAX_RETRIES: '0' } });
  t.teardown(() => h.close());
  let status = 500;
  const receiver = await startReceiver(() => status);
  t.teardown(() => receiver.close());
  const sub = await h.subscribe(receiver.url, ['outreach.message_received']);
  for (let i = 0; i < 5; i++) await h.append(messageReceived(h.tenant, 200 + i));
  await waitUntil('five failures', async () => (await failedCount(h, sub.id)) === 5);
  t.equal((await subscription(h, sub.id)).consecutive_failures, 5);
  status = 204;
  await h.append(messageReceived(h.tenant, 205));
  await receiver.waitFor((r) => r.length >= 6);
  await waitUntil('the counter to reset', async () => (await subscription(h, sub.id)).consecutive_failures === 0);
  const s = await subscription(h, sub.id);
  t.equal(s.consecutive_failures, 0);
  t.equal(s.last_delivery_status, 'ok');
  t.equal(s.is_active, true);
});

t.test('a 3xx is a failure and the redirect is not followed', async (t) => {
  const h = await startHarness({ env: { WEBHOOK_MAX_RETRIES: '0' } });
  t.teardown(() => h.close());
  const target = await startReceiver(() => 200);
  t.teardown(() => target.close());
  const receiver = await startReceiver(() => 302);
  receiver.behaviour = () => 302;
  t.teardown(() => receiver.close());
  const sub = await h.subscribe(receiver.url, ['outreach.message_received']);
  await h.append(messageReceived(h.tenant, 300));
  await waitUntil('the failure', async () => (await failedCount(h, sub.id)) === 1);
  const s = await subscription(h, sub.id);
  t.equal(s.last_delivery_status, 'http_302');
  t.equal(s.consecutive_failures, 1);
  t.equal(receiver.received.length, 1);
  t.equal(target.received.length, 0, 'nothing followed the redirect');
});

t.test('a receiver that never answers fails at the timeout', async (t) => {
  const h = await startHarness({ env: { WEBHOOK_MAX_RETRIES: '0', WEBHOOK_TIMEOUT_MS: '300' } });
  t.teardown(() => h.close());
  const receiver = await startReceiver(() => 'hang');
  t.teardown(() => receiver.close());
  const sub = await h.subscribe(receiver.url, ['outreach.message_received']);
  const started = Date.now();
  await h.append(messageReceived(h.tenant, 400));
  await waitUntil('the failure', async () => (await failedCount(h, sub.id)) === 1);
  const elapsed = Date.now() - started;
  t.ok(elapsed >= 300, `failed no sooner than the timeout (${elapsed} ms)`);
  t.ok(elapsed < 3_000, 'and not much later');
  const s = await subscription(h, sub.id);
  t.equal(s.last_delivery_status, 'timeout');
  const docs = await h.app.services.readModels.find<WebhookDeliveryDoc>('webhookDeliveries', { subscription_id: sub.id });
  t.ok(docs[0]!.attempts[0]!.duration_ms >= 290, 'attempt duration about the timeout');
});

t.test('a slow endpoint does not delay deliveries to others', async (t) => {
  const h = await startHarness({ env: { WEBHOOK_MAX_RETRIES: '0', WEBHOOK_TIMEOUT_MS: '10000', WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: '4' } });
  t.teardown(() => h.close());
  const slow = await startReceiver(() => 'hang');
  const fast = await startReceiver(() => 200);
  t.teardown(() => slow.close());
  t.teardown(() => fast.close());
  const slowSub = await h.subscribe(slow.url, ['outreach.message_received']);
  await h.subscribe(fast.url, ['outreach.message_received']);
  await Promise.all(Array.from({ length: 40 }, (_, i) => h.append(messageReceived(h.tenant, 500 + i))));
  await fast.waitFor((r) => r.length >= 40, 9_000);
  const slowAttempts = (await h.app.services.events.readStream(deliveriesStream(slowSub.id))).filter((e) => e.type === 'DeliveryAttempted');
  t.equal(slowAttempts.length, 0, 'all 40 reached the healthy endpoint before any attempt to the hanging one ended');
  t.equal(slow.received.length, 4, 'the hanging endpoint holds no more than its per-subscription concurrency');
});

t.test('deleting a subscription mid-retry stops its retries and deletes its delivery history', async (t) => {
  const h = await startHarness({ env: { WEBHOOK_RETRY_BASE_MS: '400' } });
  t.teardown(() => h.close());
  const receiver = await startReceiver(() => 500);
  t.teardown(() => receiver.close());
  const sub = await h.subscribe(receiver.url, ['outreach.message_received']);
  await h.append(messageReceived(h.tenant, 600));
  await receiver.waitFor((r) => r.length >= 1);
  await settled(h);
  t.ok((await h.app.services.events.readStream(deliveriesStream(sub.id))).length >= 1, 'history exists');
  const del = await h.app.fastify.inject({ method: 'DELETE', url: `/api/v1/sites/${h.tenant.siteId}/outreach/webhooks/${sub.id}`, headers: bearer(h.tenant.key) });
  t.equal(del.statusCode, 200);
  // From the moment the worker has seen the deletion, nothing more arrives (an attempt already in
  // flight on a loaded machine may land just before that moment).
  await h.worker.waitForPosition(await h.app.services.events.headPosition(), 5_000);
  await sleep(50);
  const received = receiver.received.length;
  t.ok(received <= 2, `at most the first attempt and one retry in flight (${received})`);
  await sleep(1_500);
  t.equal(receiver.received.length, received, 'no retry after deletion');
  t.same(await h.app.services.events.readStream(deliveriesStream(sub.id)), [], 'delivery stream erased');
  await settled(h);
  t.same(await h.app.services.readModels.find('webhookDeliveries', { subscription_id: sub.id }), [], 'delivery read model erased');
  const p = await h.append(messageReceived(h.tenant, 601));
  await h.worker.waitForPosition(p, 5_000);
  await sleep(100);
  t.equal(receiver.received.length, received, 'no new deliveries');
  t.same(await h.app.services.events.readStream(deliveriesStream(sub.id)), [], 'and no new history');
});
