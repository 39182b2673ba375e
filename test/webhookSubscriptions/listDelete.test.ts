import t from 'tap';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { anotherSite, expectError, validBody, webhooksPath } from '../helpers/http.ts';

const LISTED_FIELDS = [
  'id',
  'label',
  'url',
  'secret_prefix',
  'event_types',
  'is_active',
  'consecutive_failures',
  'created_by_oauth_client_id',
  'created_at',
  'last_delivery_at',
  'last_delivery_status',
].sort();

const app = await startTestApp();
t.teardown(() => app.close());
const a = await createTenant(app.services);
const b = await createTenant(app.services);

const create = async (siteId: string, key: string, body = validBody()) => {
  const res = await app.fastify.inject({ method: 'POST', url: webhooksPath(siteId), headers: bearer(key), payload: body });
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
  return res.json() as { subscription: Record<string, unknown> & { id: string }; secret: string };
};
const list = (siteId: string, key: string) => app.fastify.inject({ method: 'GET', url: webhooksPath(siteId), headers: bearer(key) });
const remove = (siteId: string, key: string, id: string) =>
  app.fastify.inject({ method: 'DELETE', url: `${webhooksPath(siteId)}/${id}`, headers: bearer(key) });

t.test('an empty site lists no subscriptions', async (t) => {
  const res = await list(b.siteId, b.key);
  t.equal(res.statusCode, 200);
  t.same(res.json(), { subscriptions: [] });
});

t.test('several subscriptions per site, each with its own event types; the list omits team_id, site_id, updated_at and every secret', async (t) => {
  const created = [
    await create(a.siteId, a.key, validBody({ label: 'one', eventTypes: ['outreach.reply_sent'] })),
    await create(a.siteId, a.key, validBody({ label: 'two', url: 'https://two.example.com/h', eventTypes: ['outreach.contact_suppressed', 'outreach.opportunity_created'] })),
    await create(a.siteId, a.key, validBody({ label: 'three', eventTypes: ['outreach.message_received'] })),
  ];
  const res = await list(a.siteId, a.key);
  t.equal(res.statusCode, 200);
  const body = res.json();
  t.same(Object.keys(body), ['subscriptions']);
  t.equal(body.subscriptions.length, 3);
  for (const c of created) {
    const listed = body.subscriptions.find((s: { id: string }) => s.id === c.subscription.id);
    t.ok(listed, `lists ${c.subscription.label}`);
    t.same(Object.keys(listed).sort(), LISTED_FIELDS, 'exactly the list fields');
    const { team_id: _t, site_id: _s, updated_at: _u, ...expected } = c.subscription;
    t.same(listed, expected, 'the same values as at creation');
    t.notOk(res.body.includes(c.secret), 'the secret is not in the list response');
    t.notOk(res.body.includes(c.secret.slice('svc_wh_'.length + 8)), 'no tail of the secret either');
  }
  t.notOk(/team_id|site_id|updated_at|secret"|sealed/.test(res.body), 'no omitted field name appears anywhere');
});

t.test('the secret is in neither the read model nor any event', async (t) => {
  const { secret } = await create(a.siteId, a.key);
  const docs = await app.services.readModels.find('webhookSubscriptions', {});
  t.ok(docs.length > 0);
  t.notOk(JSON.stringify(docs).includes(secret.slice('svc_wh_'.length)), 'read model holds no secret');
  const events = await app.services.events.readAll({ limit: 100_000 });
  const raw = JSON.stringify(events.map((e) => ({ data: e.data, metadata: e.metadata })));
  t.notOk(raw.includes(secret.slice('svc_wh_'.length)), 'no event data or metadata holds the secret');
});

t.test('lists are per site: another site of the same team and another team see none of them', async (t) => {
  const second = await anotherSite(app.services, a.teamId);
  t.same((await list(second, a.key)).json(), { subscriptions: [] });
  t.same((await list(b.siteId, b.key)).json(), { subscriptions: [] });
});

t.test('DELETE answers 200 { success: true }, then the list no longer has it, and a second DELETE is 404', async (t) => {
  const keep = await create(a.siteId, a.key, validBody({ label: 'keep' }));
  const gone = await create(a.siteId, a.key, validBody({ label: 'gone' }));
  const res = await remove(a.siteId, a.key, gone.subscription.id);
  t.equal(res.statusCode, 200);
  t.same(res.json(), { success: true });
  const ids = (await list(a.siteId, a.key)).json().subscriptions.map((s: { id: string }) => s.id);
  t.notOk(ids.includes(gone.subscription.id), 'deleted one is gone');
  t.ok(ids.includes(keep.subscription.id), 'the other one stays');
  t.equal(await app.services.readModels.get('webhookSubscriptions', gone.subscription.id), null, 'removed from the read model');
  expectError(t, await remove(a.siteId, a.key, gone.subscription.id), 404, 'NOT_FOUND', 'second delete');
});

t.test('DELETE with a JSON content type and an empty body still works', async (t) => {
  const { subscription } = await create(a.siteId, a.key);
  const res = await app.fastify.inject({
    method: 'DELETE',
    url: `${webhooksPath(a.siteId)}/${subscription.id}`,
    headers: { ...bearer(a.key), 'content-type': 'application/json' },
    payload: '',
  });
  t.equal(res.statusCode, 200);
});

t.test('404 NOT_FOUND for a missing id, a malformed id, and an id of another site (same team or not)', async (t) => {
  const onA = await create(a.siteId, a.key);
  const second = await anotherSite(app.services, a.teamId, 'third.example.test');
  expectError(t, await remove(a.siteId, a.key, '01ARZ3NDEKTSV4RRFFQ69G5FAV'), 404, 'NOT_FOUND', 'missing id');
  expectError(t, await remove(a.siteId, a.key, 'not-an-id'), 404, 'NOT_FOUND', 'malformed id');
  expectError(t, await remove(a.siteId, a.key, 'x'.repeat(101)), 404, 'NOT_FOUND', 'an id of 101 characters (the spec: "does not exist")');
  expectError(t, await remove(a.siteId, a.key, onA.subscription.id.toLowerCase()), 404, 'NOT_FOUND', 'lower-cased id');
  expectError(t, await remove(a.siteId, a.key, 'x'.repeat(100)), 404, 'NOT_FOUND', 'long id');
  expectError(t, await remove(second, a.key, onA.subscription.id), 404, 'NOT_FOUND', 'same team, other site');
  expectError(t, await remove(b.siteId, b.key, onA.subscription.id), 404, 'NOT_FOUND', 'other team, its own site');
  const ids = (await list(a.siteId, a.key)).json().subscriptions.map((s: { id: string }) => s.id);
  t.ok(ids.includes(onA.subscription.id), 'the subscription survived every refused delete');
});

t.test('read your writes: POST then GET at once shows it, DELETE then GET at once does not (20 rounds)', async (t) => {
  for (let i = 0; i < 20; i++) {
    const { subscription } = await create(b.siteId, b.key, validBody({ label: `ryw ${i}` }));
    const afterCreate = (await list(b.siteId, b.key)).json().subscriptions.map((s: { id: string }) => s.id);
    t.ok(afterCreate.includes(subscription.id), `round ${i}: visible after POST`);
    t.equal((await remove(b.siteId, b.key, subscription.id)).statusCode, 200);
    const afterDelete = (await list(b.siteId, b.key)).json().subscriptions.map((s: { id: string }) => s.id);
    t.notOk(afterDelete.includes(subscription.id), `round ${i}: gone after DELETE`);
  }
});

t.test('read your writes under concurrency: 10 parallel POSTs are all listed right after', async (t) => {
  const created = await Promise.all(Array.from({ length: 10 }, (_, i) => create(b.siteId, b.key, validBody({ label: `par ${i}` }))));
  const ids = (await list(b.siteId, b.key)).json().subscriptions.map((s: { id: string }) => s.id);
  for (const c of created) t.ok(ids.includes(c.subscription.id));
});
