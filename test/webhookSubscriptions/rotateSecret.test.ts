import t from 'tap';
import { verifyWebhookSignature } from '../../src/processors/webhookDelivery/verifyWebhookSignature.js';
import { bearer, TestClock } from '../helpers/testApp.ts';
import { expectError, webhooksPath } from '../helpers/http.ts';
import { messageReceived, signaturesOf, signedWith, startHarness, startReceiver } from '../webhooks/helpers.ts';

t.test('during the grace period deliveries carry both signatures; after it only the new one', async (t) => {
  const clock = new TestClock(new Date());
  const h = await startHarness({ clock });
  t.teardown(() => h.close());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const { id, secret: oldSecret } = await h.subscribe(receiver.url, ['outreach.message_received']);
  const rotate = (body: unknown) =>
    h.app.fastify.inject({ method: 'POST', url: `${webhooksPath(h.tenant.siteId)}/${id}/rotate-secret`, headers: bearer(h.tenant.key), payload: body as string });

  await h.append(messageReceived(h.tenant, 1));
  await receiver.waitFor((r) => r.length >= 1);
  t.equal(signaturesOf(receiver.received[0]!)?.v1.length, 1, 'before the rotation: one v1');
  t.ok(signedWith(receiver.received[0]!, oldSecret));

  const res = await rotate({ graceSeconds: 3600 });
  t.equal(res.statusCode, 200, res.body);
  const body = res.json();
  t.same(Object.keys(body).sort(), ['previous_secret_expires_at', 'secret', 'subscription']);
  const newSecret: string = body.secret;
  t.match(newSecret, /^svc_wh_[A-Za-z0-9_-]+$/);
  t.not(newSecret, oldSecret);
  t.ok(newSecret.startsWith(body.subscription.secret_prefix.slice(0, -1)), 'secret_prefix follows the new secret');
  t.equal(body.previous_secret_expires_at, new Date(clock.now().getTime() + 3_600_000).toISOString());
  const listed = (await h.app.fastify.inject({ method: 'GET', url: webhooksPath(h.tenant.siteId), headers: bearer(h.tenant.key) })).json().subscriptions[0];
  t.equal(listed.secret_prefix, body.subscription.secret_prefix, 'the list shows the new prefix; never the secret');
  const stored = JSON.stringify((await h.app.services.events.readAll({ limit: 100_000 })).map((e) => e.data));
  t.notOk(stored.includes(newSecret), 'the new secret is stored sealed, never in clear');

  await h.worker.waitForPosition(await h.app.services.events.headPosition(), 10_000);
  await h.append(messageReceived(h.tenant, 2));
  await receiver.waitFor((r) => r.length >= 2);
  const during = receiver.received[1]!;
  t.equal(signaturesOf(during)?.v1.length, 2, 'during the grace: two v1 entries');
  t.ok(signedWith(during, newSecret), 'one verifies with the new secret');
  t.ok(signedWith(during, oldSecret), 'one verifies with the old secret');
  const at = clock.now();
  t.ok(verifyWebhookSignature(during.rawBody, String(during.headers['service-signature']), newSecret, { now: at }), 'the reference verifier accepts the new secret');
  t.ok(verifyWebhookSignature(during.rawBody, String(during.headers['service-signature']), oldSecret, { now: at }), 'and the old one');

  clock.advance(3_600_000);
  await h.append(messageReceived(h.tenant, 3));
  await receiver.waitFor((r) => r.length >= 3);
  const after = receiver.received[2]!;
  t.equal(signaturesOf(after)?.v1.length, 1, 'after the grace: one v1');
  t.ok(signedWith(after, newSecret), 'the new secret signs');
  t.notOk(signedWith(after, oldSecret), 'the old secret no longer does');
});

t.test('graceSeconds 0: only the new secret signs from the rotation on', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const { id, secret: oldSecret } = await h.subscribe(receiver.url, ['outreach.message_received']);
  const res = await h.app.fastify.inject({ method: 'POST', url: `${webhooksPath(h.tenant.siteId)}/${id}/rotate-secret`, headers: bearer(h.tenant.key), payload: { graceSeconds: 0 } });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.json().previous_secret_expires_at, null);
  await h.worker.waitForPosition(await h.app.services.events.headPosition(), 10_000);
  await h.append(messageReceived(h.tenant, 1));
  await receiver.waitFor((r) => r.length >= 1);
  t.equal(signaturesOf(receiver.received[0]!)?.v1.length, 1);
  t.ok(signedWith(receiver.received[0]!, res.json().secret));
  t.notOk(signedWith(receiver.received[0]!, oldSecret));
});

t.test('bad bodies and unknown ids', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const { id } = await h.subscribe('https://example.com/hook', ['outreach.message_received']);
  const rotate = (sub: string, body: unknown) =>
    h.app.fastify.inject({ method: 'POST', url: `${webhooksPath(h.tenant.siteId)}/${sub}/rotate-secret`, headers: bearer(h.tenant.key), payload: body as string });
  for (const [what, body] of [
    ['missing graceSeconds', {}],
    ['over 24 hours', { graceSeconds: 86_401 }],
    ['negative', { graceSeconds: -1 }],
    ['fractional', { graceSeconds: 1.5 }],
    ['a string', { graceSeconds: '60' }],
    ['an unknown field', { graceSeconds: 60, keepOld: true }],
  ] as const) {
    expectError(t, await rotate(id, body), 400, 'VALIDATION_ERROR', what);
  }
  expectError(t, await rotate('01ARZ3NDEKTSV4RRFFQ69G5FAV', { graceSeconds: 0 }), 404, 'NOT_FOUND', 'unknown id');
  t.equal((await h.app.services.events.readStream(`webhook_subscription-${id}`)).length, 1, 'no rotation recorded');
});

t.test("a second rotation with a grace while the first one's grace runs: 409 CONFLICT; with no grace it ends every old secret", async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const { id } = await h.subscribe('https://example.com/hook', ['outreach.message_received']);
  const rotate = (graceSeconds: number) =>
    h.app.fastify.inject({ method: 'POST', url: `${webhooksPath(h.tenant.siteId)}/${id}/rotate-secret`, headers: bearer(h.tenant.key), payload: { graceSeconds } });
  const first = await rotate(3600);
  t.equal(first.statusCode, 200);
  const expires = first.json().previous_secret_expires_at as string;
  const second = await rotate(3600);
  expectError(t, second, 409, 'CONFLICT', 'the first grace would be cut short');
  t.match(second.json().error.message, expires, 'names until when the old secret signs');
  const stream = `webhook_subscription-${id}`;
  t.equal((await h.app.services.events.readStream(stream)).length, 2, 'nothing recorded');
  const now = await rotate(0);
  t.equal(now.statusCode, 200, 'no grace: allowed, every old secret stops');
  t.equal(now.json().previous_secret_expires_at, null);
  t.equal((await rotate(60)).statusCode, 200, 'after that a graceful rotation is allowed again');
});
