import t from 'tap';
import { fetch } from 'undici';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { expectError, validBody, webhooksPath } from '../helpers/http.ts';

// READY_MAX_LAG_EVENTS=0: one event behind is already not ready (test/operations/readiness.test.ts covers the threshold).
const app = await startTestApp({ listen: true, env: { READY_MAX_LAG_EVENTS: '0' } });
t.teardown(() => app.close());
const tenant = await createTenant(app.services);

t.test('GET /healthz answers 200 without credentials', async (t) => {
  const res = await app.fastify.inject({ method: 'GET', url: '/healthz' });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { status: 'ok' });
});

t.test('GET /readyz is 200 when caught up and 503 while projections are behind the log', async (t) => {
  const ready = await app.fastify.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 200);
  t.same(ready.json(), { status: 'ready' });

  await app.services.projections.stop();
  await app.services.events.append('site-readyz', [{ type: 'SiteSettingsChanged', data: { siteId: 'readyz', changes: {}, changedAt: '2026-01-01T00:00:00.000Z' } }], 'any');
  const behind = await app.fastify.inject({ method: 'GET', url: '/readyz' });
  t.equal(behind.statusCode, 503);
  t.equal(behind.json().status, 'not_ready');
  t.match(behind.json().reason, /projections/);

  app.services.projections.start();
  t.ok(await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000));
  t.equal((await app.fastify.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'ready again');
});

t.test('GET /api/v1/openapi.json is an OpenAPI 3.1 document with the three webhook operations', async (t) => {
  const res = await app.fastify.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  t.equal(res.statusCode, 200);
  const doc = res.json();
  t.match(doc.openapi, /^3\.1\.\d+$/);
  const collection = doc.paths['/api/v1/sites/{siteId}/outreach/webhooks'];
  const item = doc.paths['/api/v1/sites/{siteId}/outreach/webhooks/{id}'];
  t.ok(collection?.post, 'POST');
  t.ok(collection?.get, 'GET');
  t.ok(item?.delete, 'DELETE');
  const schema = collection.post.requestBody?.content?.['application/json']?.schema;
  t.ok(schema, 'POST has a JSON request schema');
  t.same([...schema.required].sort(), ['eventTypes', 'label', 'url']);
  t.equal(schema.properties.url.maxLength, 2000);
  t.equal(schema.properties.label.maxLength, 120, "the label's bound (spec: 120 characters)");
  t.same([...schema.properties.eventTypes.items.enum].sort(), [
    'outreach.contact_suppressed',
    'outreach.conversation_status_changed',
    'outreach.message_received',
    'outreach.opportunity_created',
    'outreach.reply_sent',
  ]);
  t.ok(collection.post.responses['201'], 'documents 201');
  for (const status of ['400', '401', '403', '404']) t.ok(collection.post.responses[status], `POST documents ${status}`);
  t.ok(item.delete.responses['200'] && item.delete.responses['404'], 'DELETE documents 200 and 404');
  t.ok(doc.components?.securitySchemes?.bearer, 'bearer security scheme');
  t.same(collection.post.security, [{ bearer: ['webhooks:write'] }], 'each operation names its scope (OpenAPI 3.1 roles)');
  t.same(collection.get.security, [{ bearer: ['webhooks:read'] }]);
  t.same(doc.paths['/api/v1/sites/{siteId}/outreach/conversations'].get.security, [{ bearer: ['inbox:read'] }]);
  t.same(doc.paths['/api/v1/sites/{siteId}/outreach/inbox/messages'].post.security, [{ bearer: ['inbox:write'] }]);
  const unscoped = Object.entries(doc.paths as Record<string, Record<string, { security?: Array<{ bearer?: string[] }> }>>).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.security?.[0]?.bearer?.length !== 1)
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
  t.same(unscoped, [], 'every operation names one scope');
  const limit = doc.paths['/api/v1/sites/{siteId}/outreach/conversations'].get.parameters.find((p: { name: string }) => p.name === 'limit');
  t.same(limit.schema, { type: 'integer', minimum: 1, maximum: 100 }, 'a list limit is documented as the integer it is');
  // The REST API only: OAuth's endpoints (with 405-only methods), /mcp and the dashboard pages were listed as bearer operations.
  t.same(Object.keys(doc.paths).filter((path) => !path.startsWith('/api/v1/sites/')), [], 'no path outside the REST API');
  const site = '/api/v1/sites/{siteId}';
  t.ok(doc.paths[`${site}/outreach/inbox/messages`].post.responses['409'], 'ingestion documents 409 (an Idempotency-Key reused with another body)');
  for (const detail of ['outreach/conversations/{conversationId}', 'outreach/opportunities/{opportunityId}', 'articles/{articleId}']) {
    t.ok(doc.paths[`${site}/${detail}`].get.responses['400'], `GET ${detail} documents 400 (an id too long)`);
  }
  const agentBody = doc.paths[`${site}/agents/{agentKey}`].put.requestBody.content['application/json'].schema;
  t.equal(agentBody.additionalProperties, false, 'an agent update documents that other fields are refused (400 UNKNOWN_SETTING)');
});

t.test('over a real loopback port with fetch: create, list, delete, and an error envelope', async (t) => {
  const base = `${app.url}${webhooksPath(tenant.siteId)}`;
  const created = await fetch(base, {
    method: 'POST',
    headers: { ...bearer(tenant.key), 'content-type': 'application/json' },
    body: JSON.stringify(validBody()),
  });
  t.equal(created.status, 201);
  const { subscription, secret } = (await created.json()) as { subscription: { id: string }; secret: string };
  t.match(secret, /^svc_wh_/);
  const listed = await fetch(base, { headers: bearer(tenant.key) });
  t.equal(listed.status, 200);
  const listBody = await listed.text();
  t.ok(listBody.includes(subscription.id));
  t.notOk(listBody.includes(secret));
  const deleted = await fetch(`${base}/${subscription.id}`, { method: 'DELETE', headers: bearer(tenant.key) });
  t.equal(deleted.status, 200);
  t.same(await deleted.json(), { success: true });
  const unauth = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
  expectError(t, { statusCode: unauth.status, headers: Object.fromEntries(unauth.headers), body: await unauth.text() }, 401, 'UNAUTHORIZED');
  const notFound = await fetch(`${app.url}/nowhere`);
  expectError(t, { statusCode: notFound.status, headers: Object.fromEntries(notFound.headers), body: await notFound.text() }, 404, 'NOT_FOUND');
});

t.test("the REST answers are not cached: Cache-Control no-store (a team's data, contacts' personal data among it)", async (t) => {
  for (const [url, headers, status] of [
    [`/api/v1/sites/${tenant.siteId}/outreach/conversations`, bearer(tenant.key), 200],
    [`/api/v1/sites/${tenant.siteId}/outreach/conversations`, {}, 401],
    ['/api/v1/nope', bearer(tenant.key), 404],
  ] as const) {
    const res = await app.fastify.inject({ method: 'GET', url, headers });
    t.equal(res.statusCode, status, url);
    t.equal(res.headers['cache-control'], 'no-store', `${status}: no-store`);
  }
});
