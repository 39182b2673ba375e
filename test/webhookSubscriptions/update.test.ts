import t from 'tap';
import { deliveriesStream } from '../../src/domain/webhookDelivery.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { anotherSite, expectError, keyWith, settle, validBody, webhooksPath } from '../helpers/http.ts';

const app = await startTestApp();
t.teardown(() => app.close());
const tenant = await createTenant(app.services);
const create = async (overrides: Record<string, unknown> = {}) => {
  const res = await app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: bearer(tenant.key), payload: validBody(overrides) });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json() as { subscription: Record<string, unknown> & { id: string }; secret: string };
};
const patch = (id: string, body: unknown, key = tenant.key, siteId = tenant.siteId) =>
  app.fastify.inject({ method: 'PATCH', url: `${webhooksPath(siteId)}/${id}`, headers: bearer(key), payload: body as string });
const list = async () => (await app.fastify.inject({ method: 'GET', url: webhooksPath(tenant.siteId), headers: bearer(tenant.key) })).json().subscriptions as Array<Record<string, unknown>>;

t.test('200: label, url and eventTypes change; the answer is the subscription as create returns it, without the secret', async (t) => {
  const { subscription, secret } = await create();
  const res = await patch(subscription.id, { label: 'crm v2', url: 'https://hooks.example.org/v2', eventTypes: ['outreach.message_received', 'outreach.reply_sent'] });
  t.equal(res.statusCode, 200, res.body);
  const body = res.json();
  t.same(Object.keys(body), ['subscription'], 'no secret in the answer');
  t.same(Object.keys(body.subscription).sort(), Object.keys(subscription).sort(), 'the same fields as create');
  t.equal(body.subscription.label, 'crm v2');
  t.equal(body.subscription.url, 'https://hooks.example.org/v2');
  t.same(body.subscription.event_types, ['outreach.message_received', 'outreach.reply_sent']);
  t.equal(body.subscription.secret_prefix, subscription.secret_prefix, 'the secret is unchanged');
  t.equal(body.subscription.created_at, subscription.created_at);
  t.notOk(JSON.stringify(body).includes(secret), 'the secret appears nowhere');
  const listed = (await list()).find((s) => s.id === subscription.id)!;
  t.equal(listed.label, 'crm v2', 'the list shows the change at once');
  const events = (await app.services.events.readStream(`webhook_subscription-${subscription.id}`)).map((e) => e.type);
  t.same(events, ['SubscriptionCreated', 'SubscriptionUpdated']);

  const one = await patch(subscription.id, { label: 'only the label' });
  t.equal(one.statusCode, 200);
  t.equal(one.json().subscription.label, 'only the label');
  t.equal(one.json().subscription.url, 'https://hooks.example.org/v2', 'fields not given stay');

  const same = await patch(subscription.id, { label: 'only the label' });
  t.equal(same.statusCode, 200, 'an update that changes nothing is a success');
  t.equal((await app.services.events.readStream(`webhook_subscription-${subscription.id}`)).length, 3, 'and records nothing');
});

t.test('400 VALIDATION_ERROR for bad bodies, with the create rules', async (t) => {
  const { subscription } = await create();
  const bad: Array<[string, unknown]> = [
    ['empty object', {}],
    ['blank label', { label: '   ' }],
    ['label over 120 characters', { label: 'x'.repeat(121) }],
    ['empty eventTypes', { eventTypes: [] }],
    ['unknown event type', { eventTypes: ['outreach.nope'] }],
    ['http url', { url: 'http://example.com/hook' }],
    ['not a url', { url: 'not a url' }],
    ['url over 2000 characters', { url: `https://example.com/${'a'.repeat(2000)}` }],
    ['unknown field', { label: 'x', isActive: true }],
    ['secret field', { secret: 'svc_wh_x' }],
    ['array body', [{ label: 'x' }]],
    ['string label', { label: 42 }],
  ];
  for (const [what, body] of bad) expectError(t, await patch(subscription.id, body), 400, 'VALIDATION_ERROR', what);
  const listed = (await list()).find((s) => s.id === subscription.id)!;
  t.equal(listed.label, 'crm', 'nothing changed');
});

t.test('400 for an SSRF URL: loopback, private, metadata and credentials in the URL', async (t) => {
  const { subscription } = await create();
  for (const url of ['https://127.0.0.1/hook', 'https://10.0.0.5/hook', 'https://169.254.169.254/latest', 'https://[::1]/hook', 'https://localhost/hook', 'https://user:pw@example.com/hook']) {
    expectError(t, await patch(subscription.id, { url }), 400, 'VALIDATION_ERROR', url);
  }
  t.equal((await list()).find((s) => s.id === subscription.id)!.url, 'https://example.com/hooks/outreach');
});

t.test('404 NOT_FOUND for a missing id, a malformed id, or another site\'s subscription; scopes and sites as on delete', async (t) => {
  const { subscription } = await create();
  expectError(t, await patch('01ARZ3NDEKTSV4RRFFQ69G5FAV', { label: 'x' }), 404, 'NOT_FOUND', 'unknown id');
  expectError(t, await patch('not-an-id', { label: 'x' }), 404, 'NOT_FOUND', 'malformed id');
  expectError(t, await patch('x'.repeat(101), { label: 'x' }), 404, 'NOT_FOUND', 'an id of 101 characters');
  const other = await anotherSite(app.services, tenant.teamId);
  expectError(t, await patch(subscription.id, { label: 'x' }, tenant.key, other), 404, 'NOT_FOUND', 'the id under another site of the team');
  const readOnly = await keyWith(app.services, tenant.teamId, ['webhooks:read']);
  expectError(t, await patch(subscription.id, { label: 'x' }, readOnly.key), 403, 'INSUFFICIENT_SCOPE');
  const stranger = await createTenant(app.services);
  expectError(t, await patch(subscription.id, { label: 'x' }, stranger.key), 404, 'SITE_NOT_FOUND', "another team's site");
  expectError(t, await app.fastify.inject({ method: 'PATCH', url: `${webhooksPath(tenant.siteId)}/${subscription.id}`, payload: { label: 'x' } }), 401, 'UNAUTHORIZED');
});

t.test('409 SUBSCRIPTION_DISABLED: an auto-disabled subscription stays disabled', async (t) => {
  const { subscription } = await create();
  await app.services.events.append(
    deliveriesStream(subscription.id),
    [{ type: 'SubscriptionAutoDisabled', data: { subscriptionId: subscription.id, consecutiveFailures: 10, disabledAt: new Date().toISOString() } }],
    'any',
  );
  await settle(app.services);
  expectError(t, await patch(subscription.id, { url: 'https://example.com/fixed' }), 409, 'SUBSCRIPTION_DISABLED', 'update');
  const rotate = await app.fastify.inject({ method: 'POST', url: `${webhooksPath(tenant.siteId)}/${subscription.id}/rotate-secret`, headers: bearer(tenant.key), payload: { graceSeconds: 0 } });
  expectError(t, rotate, 409, 'SUBSCRIPTION_DISABLED', 'rotate');
  t.equal((await list()).find((s) => s.id === subscription.id)!.is_active, false);
});
