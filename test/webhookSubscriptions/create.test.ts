import t from 'tap';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/eventCatalog.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { expectError, settle, validBody, webhooksPath } from '../helpers/http.ts';

const CREATED_FIELDS = [
  'id',
  'team_id',
  'site_id',
  'label',
  'url',
  'secret_prefix',
  'event_types',
  'is_active',
  'consecutive_failures',
  'created_by_oauth_client_id',
  'created_at',
  'updated_at',
  'last_delivery_at',
  'last_delivery_status',
].sort();

const app = await startTestApp();
t.teardown(() => app.close());
const tenant = await createTenant(app.services);
const post = (body: unknown, headers: Record<string, string> = {}) =>
  app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: { ...bearer(tenant.key), ...headers }, payload: body as string });
const countCreated = async () => (await app.services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'SubscriptionCreated').length;
const isIso = (v: unknown) => typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(v) && new Date(v).toISOString() === v;

t.test('201: the body is exactly { subscription, secret } with the spec fields and nothing else', async (t) => {
  const before = Date.now();
  const res = await post(validBody({ eventTypes: ['outreach.reply_sent', 'outreach.message_received'] }));
  t.equal(res.statusCode, 201);
  t.match(res.headers['content-type'], /^application\/json/);
  const body = res.json();
  t.same(Object.keys(body).sort(), ['secret', 'subscription']);
  const s = body.subscription;
  t.same(Object.keys(s).sort(), CREATED_FIELDS, 'exactly the spec fields');
  t.match(s.id, /^[0-9A-Z]{26}$/);
  t.equal(s.team_id, tenant.teamId);
  t.equal(s.site_id, tenant.siteId);
  t.equal(s.label, 'crm');
  t.equal(s.url, 'https://example.com/hooks/outreach');
  t.same(s.event_types, ['outreach.reply_sent', 'outreach.message_received']);
  t.equal(s.is_active, true);
  t.equal(s.consecutive_failures, 0);
  t.equal(s.created_by_oauth_client_id, null, 'null for API-key callers');
  t.equal(s.last_delivery_at, null);
  t.equal(s.last_delivery_status, null);
  t.ok(isIso(s.created_at), `created_at is ISO 8601: ${s.created_at}`);
  t.ok(isIso(s.updated_at), `updated_at is ISO 8601: ${s.updated_at}`);
  t.ok(Date.parse(s.created_at) >= before - 1000 && Date.parse(s.created_at) <= Date.now() + 1000, 'created_at is now');

  const secret: string = body.secret;
  t.match(secret, /^svc_wh_[A-Za-z0-9_-]+$/);
  t.ok(Buffer.from(secret.slice('svc_wh_'.length), 'base64url').length >= 32, 'carries at least 32 random bytes');
  t.ok(s.secret_prefix.endsWith('…'), 'secret_prefix ends with an ellipsis');
  const lead = s.secret_prefix.slice(0, -1);
  t.ok(secret.startsWith(lead), 'secret_prefix is the leading part of the secret');
  t.ok(lead.startsWith('svc_wh_') && lead.length < secret.length - 16, 'secret_prefix reveals only a short leading part');
});

t.test('each subscription gets its own secret and id', async (t) => {
  const a = (await post(validBody())).json();
  const b = (await post(validBody())).json();
  t.not(a.secret, b.secret);
  t.not(a.subscription.id, b.subscription.id);
});

t.test('every catalog event type is accepted, all five at once too', async (t) => {
  for (const type of WEBHOOK_EVENT_TYPES) t.equal((await post(validBody({ eventTypes: [type] }))).statusCode, 201, type);
  const all = await post(validBody({ eventTypes: [...WEBHOOK_EVENT_TYPES] }));
  t.equal(all.statusCode, 201);
  t.same(all.json().subscription.event_types, [...WEBHOOK_EVENT_TYPES]);
});

t.test('label boundary: 120 characters accepted, 121 refused', async (t) => {
  const ok = await post(validBody({ label: 'x'.repeat(120) }));
  t.equal(ok.statusCode, 201);
  t.equal(ok.json().subscription.label, 'x'.repeat(120));
  expectError(t, await post(validBody({ label: 'x'.repeat(121) })), 400, 'VALIDATION_ERROR', '121 chars');
  // Characters, not UTF-16 units: 120 emoji are 120 characters.
  t.equal((await post(validBody({ label: '😀'.repeat(120) }))).statusCode, 201, '120 emoji');
  expectError(t, await post(validBody({ label: '😀'.repeat(121) })), 400, 'VALIDATION_ERROR', '121 emoji');
});

t.test('url boundary: a valid https URL of 2000 characters accepted, 2001 refused', async (t) => {
  const base = 'https://example.com/';
  const url2000 = base + 'a'.repeat(2000 - base.length);
  t.equal(url2000.length, 2000);
  const ok = await post(validBody({ url: url2000 }));
  t.equal(ok.statusCode, 201);
  t.equal(ok.json().subscription.url, url2000);
  expectError(t, await post(validBody({ url: url2000 + 'a' })), 400, 'VALIDATION_ERROR', '2001 chars');
});

t.test('400 VALIDATION_ERROR for every bad body, and nothing is stored', async (t) => {
  const stored = await countCreated();
  const cases: Array<[string, unknown]> = [
    ['http:// url', validBody({ url: 'http://example.com/hook' })],
    ['ftp url', validBody({ url: 'ftp://example.com/hook' })],
    ['not a URL', validBody({ url: 'not a url' })],
    ['relative URL', validBody({ url: '/hooks' })],
    ['empty url', validBody({ url: '' })],
    ['loopback IPv4', validBody({ url: 'https://127.0.0.1/hook' })],
    ['loopback IPv6', validBody({ url: 'https://[::1]/hook' })],
    ['localhost', validBody({ url: 'https://localhost/hook' })],
    ['private 10/8', validBody({ url: 'https://10.1.2.3/hook' })],
    ['private 192.168/16', validBody({ url: 'https://192.168.1.1:8443/hook' })],
    ['link-local metadata address', validBody({ url: 'https://169.254.169.254/latest' })],
    ['IPv4-mapped loopback', validBody({ url: 'https://[::ffff:127.0.0.1]/hook' })],
    ['credentials in url', validBody({ url: 'https://user:pass@example.com/hook' })],
    // Forms the URL parser accepts but that are no HTTPS URL as written (what is stored and shown).
    ['a leading space', validBody({ url: ' https://example.com/h' })],
    ['a trailing space', validBody({ url: 'https://example.com/h ' })],
    ['no slashes', validBody({ url: 'https:example.com/h' })],
    ['backslashes', validBody({ url: 'https:\\\\example.com\\h' })],
    ['no host', validBody({ url: 'https:///h' })],
    ['a space in the path', validBody({ url: 'https://example.com/a b' })],
    ['empty eventTypes', validBody({ eventTypes: [] })],
    ['unknown event type', validBody({ eventTypes: ['outreach.unknown'] })],
    ['one unknown among known', validBody({ eventTypes: ['outreach.reply_sent', 'reply_sent'] })],
    ['eventTypes not an array', validBody({ eventTypes: 'outreach.reply_sent' })],
    ['eventTypes with a number', validBody({ eventTypes: [1] })],
    ['missing label', { url: 'https://example.com/h', eventTypes: ['outreach.reply_sent'] }],
    ['missing url', { label: 'crm', eventTypes: ['outreach.reply_sent'] }],
    ['missing eventTypes', { label: 'crm', url: 'https://example.com/h' }],
    ['empty label', validBody({ label: '' })],
    ['blank label', validBody({ label: '   ' })],
    ['label a number', validBody({ label: 42 })],
    ['url a number', validBody({ url: 42 })],
    ['label null', validBody({ label: null })],
    ['body an array', [validBody()]],
    ['body a string', 'hello'],
    ['empty object', {}],
  ];
  for (const [name, body] of cases) {
    const res = await app.fastify.inject({
      method: 'POST',
      url: webhooksPath(tenant.siteId),
      headers: { ...bearer(tenant.key), 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expectError(t, res, 400, 'VALIDATION_ERROR', name);
  }
  expectError(t, await post('{"label": "crm", "url": ', { 'content-type': 'application/json' }), 400, 'VALIDATION_ERROR', 'invalid JSON');
  expectError(t, await post('', { 'content-type': 'application/json' }), 400, 'VALIDATION_ERROR', 'empty JSON body');
  const asText = await post(JSON.stringify(validBody()), { 'content-type': 'text/plain' });
  expectError(t, asText, 400, 'VALIDATION_ERROR', 'text/plain');
  t.equal(asText.json().error.message, 'Content-Type must be application/json.', 'text/plain: says which Content-Type (it read "expected object, received string")');
  expectError(
    t,
    await post('label=crm&url=https%3A%2F%2Fexample.com%2Fh&eventTypes=outreach.reply_sent', { 'content-type': 'application/x-www-form-urlencoded' }),
    400,
    'VALIDATION_ERROR',
    'form-encoded',
  );
  expectError(t, await app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: bearer(tenant.key) }), 400, 'VALIDATION_ERROR', 'no body');
  expectError(t, await post('x'.repeat(2 * 1024 * 1024), { 'content-type': 'application/json' }), 400, 'VALIDATION_ERROR', 'oversize body');
  await settle(app.services);
  t.equal(await countCreated(), stored, 'no SubscriptionCreated event was appended by a refused request');
});

t.test('a validation message names the field', async (t) => {
  const res = await post(validBody({ eventTypes: [] }));
  t.match(res.json().error.message, /eventTypes/);
  const url = await post(validBody({ url: 'http://example.com' }));
  t.match(url.json().error.message, /https/i);
});

t.test('a label is a name the team reads in the dashboard (an OAuth app may set it): one line, no bidirectional override', async (t) => {
  // Another team: each 400 counts against the write tier, which the tests above nearly use up.
  const other = await createTenant(app.services);
  const postAs = (body: unknown) => app.fastify.inject({ method: 'POST', url: webhooksPath(other.siteId), headers: bearer(other.key), payload: body as string });
  for (const [name, label] of [
    ['a bidirectional override', 'invoice\u202egnp.exe'],
    ['an isolate', 'crm\u2066x'],
    ['a line break', 'crm\nsecond line'],
    ['a line separator', 'crm\u2028x'],
  ]) {
    const res = await postAs(validBody({ label }));
    expectError(t, res, 400, 'VALIDATION_ERROR', name);
    t.match(res.json().error.message, /label: must be one line of text: .*bidirectional override/, `${name}: says why`);
  }
  t.equal((await postAs(validBody({ label: 'CRM — נתונים (Hebrew) ✓' }))).statusCode, 201, 'right-to-left letters themselves are fine');
});
