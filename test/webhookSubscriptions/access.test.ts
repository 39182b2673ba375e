import t from 'tap';
import { changeSiteSettings, revokeApiKey } from '../../src/commands/tenancy.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { anotherSite, expectError, keyWith, settle, validBody, webhooksPath } from '../helpers/http.ts';

const app = await startTestApp();
t.teardown(() => app.close());
const a = await createTenant(app.services);
const b = await createTenant(app.services);

type Method = 'POST' | 'GET' | 'DELETE';
const call = (method: Method, siteId: string, headers: Record<string, string>, payload?: unknown, id = '01ARZ3NDEKTSV4RRFFQ69G5FAV') =>
  app.fastify.inject({
    method,
    url: method === 'DELETE' ? `${webhooksPath(siteId)}/${id}` : webhooksPath(siteId),
    headers,
    ...(method === 'POST' ? { payload: (payload ?? validBody()) as object } : {}),
  });
const METHODS: Method[] = ['POST', 'GET', 'DELETE'];

t.test('401 UNAUTHORIZED for a missing, malformed or unknown credential, on all three endpoints', async (t) => {
  const unknownKey = `svc_${'0'.repeat(64)}`;
  const cases: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['"Bearer" alone', { authorization: 'Bearer' }],
    ['"Bearer " with nothing after', { authorization: 'Bearer ' }],
    ['Basic scheme', { authorization: `Basic ${Buffer.from(`user:${a.key}`).toString('base64')}` }],
    ['the key without a scheme', { authorization: a.key }],
    ['two tokens', { authorization: `Bearer ${a.key} ${a.key}` }],
    ['unknown key of the right shape', bearer(unknownKey)],
    ['key with upper-case hex', bearer(a.key.toUpperCase().replace('SVC_', 'svc_'))],
    ['key one character short', bearer(a.key.slice(0, -1))],
    ['key with another prefix', bearer(a.key.replace('svc_', 'sk_'))],
    ['an OAuth-shaped token nobody issued', bearer('svc_oauth_doesnotexist')],
  ];
  for (const method of METHODS) {
    for (const [name, headers] of cases) expectError(t, await call(method, a.siteId, headers), 401, 'UNAUTHORIZED', `${method} ${name}`);
  }
});

t.test('the auth scheme is case-insensitive (RFC 9110 §11.1): "bearer <key>" in lower case is accepted, and spaces may follow it', async (t) => {
  t.equal((await call('GET', a.siteId, { authorization: `bearer ${a.key}` })).statusCode, 200);
  t.equal((await call('GET', a.siteId, { authorization: `BEARER ${a.key}` })).statusCode, 200);
  // RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token.
  t.equal((await call('GET', a.siteId, { authorization: `Bearer  ${a.key}` })).statusCode, 200, 'two spaces after the scheme');
  expectError(t, await call('GET', a.siteId, { authorization: `Bearer\t${a.key}` }), 401, 'UNAUTHORIZED', 'a tab is no space');
});

t.test('a revoked key gets 401 on the next request', async (t) => {
  const key = await keyWith(app.services, a.teamId, ['webhooks:read', 'webhooks:write']);
  t.equal((await call('GET', a.siteId, bearer(key.key))).statusCode, 200, 'works before');
  const { position } = await revokeApiKey(app.services, { apiKeyId: key.id });
  t.ok(await app.services.projections.waitFor(position!, 5_000));
  for (const method of METHODS) expectError(t, await call(method, a.siteId, bearer(key.key)), 401, 'UNAUTHORIZED', method);
  t.equal((await call('GET', a.siteId, bearer(a.key))).statusCode, 200, 'other keys of the team still work');
});

t.test('403 INSUFFICIENT_SCOPE', async (t) => {
  const readOnly = await keyWith(app.services, a.teamId, ['webhooks:read']);
  const writeOnly = await keyWith(app.services, a.teamId, ['webhooks:write']);
  const unrelated = await keyWith(app.services, a.teamId, ['inbox:write', 'agents:read']);
  expectError(t, await call('POST', a.siteId, bearer(readOnly.key)), 403, 'INSUFFICIENT_SCOPE', 'POST with webhooks:read');
  expectError(t, await call('DELETE', a.siteId, bearer(readOnly.key)), 403, 'INSUFFICIENT_SCOPE', 'DELETE with webhooks:read');
  expectError(t, await call('GET', a.siteId, bearer(writeOnly.key)), 403, 'INSUFFICIENT_SCOPE', 'GET with webhooks:write');
  for (const method of METHODS) expectError(t, await call(method, a.siteId, bearer(unrelated.key)), 403, 'INSUFFICIENT_SCOPE', `${method} unrelated scopes`);
  t.equal((await call('GET', a.siteId, bearer(readOnly.key))).statusCode, 200, 'webhooks:read lists');
  t.equal((await call('POST', a.siteId, bearer(writeOnly.key))).statusCode, 201, 'webhooks:write creates');
  t.match((await call('POST', a.siteId, bearer(readOnly.key))).json().error.message, /webhooks:write/, 'the message names the scope');
});

t.test('404 SITE_NOT_FOUND: unknown site, another team’s site, a site outside the key’s restriction', async (t) => {
  const secondSiteOfA = await anotherSite(app.services, a.teamId);
  const restricted = await keyWith(app.services, a.teamId, ['webhooks:read', 'webhooks:write'], a.siteId);
  for (const method of METHODS) {
    expectError(t, await call(method, '01ARZ3NDEKTSV4RRFFQ69G5FAV', bearer(a.key)), 404, 'SITE_NOT_FOUND', `${method} unknown site`);
    expectError(t, await call(method, 'no-such-site', bearer(a.key)), 404, 'SITE_NOT_FOUND', `${method} malformed site id`);
    expectError(t, await call(method, b.siteId, bearer(a.key)), 404, 'SITE_NOT_FOUND', `${method} team A key on team B site`);
    expectError(t, await call(method, a.siteId, bearer(b.key)), 404, 'SITE_NOT_FOUND', `${method} team B key on team A site`);
    expectError(t, await call(method, secondSiteOfA, bearer(restricted.key)), 404, 'SITE_NOT_FOUND', `${method} outside the restriction`);
  }
  t.equal((await call('POST', a.siteId, bearer(restricted.key))).statusCode, 201, 'the restricted key works on its site');
  t.equal((await call('GET', a.siteId, bearer(restricted.key))).statusCode, 200);
  t.equal((await call('POST', secondSiteOfA, bearer(a.key))).statusCode, 201, 'an unrestricted key reaches every site of its team');
  // Site ids in the path are opaque: a long one is still "not found", not a validation error about the path.
  expectError(t, await call('GET', 'x'.repeat(100), bearer(a.key)), 404, 'SITE_NOT_FOUND', '100-char site id');
});

t.test('an unlicensed site: 403 SITE_NOT_LICENSED on a new subscription, while its team still lists and deletes the ones its events go to', async (t) => {
  const siteId = await anotherSite(app.services, a.teamId, 'unlicensed.example.test');
  const kept = (await call('POST', siteId, bearer(a.key))).json().subscription.id;
  const removed = (await call('POST', siteId, bearer(a.key))).json().subscription.id;
  await changeSiteSettings(app.services, { siteId, changes: { licensed: false } });
  await settle(app.services);
  expectError(t, await call('POST', siteId, bearer(a.key)), 403, 'SITE_NOT_LICENSED', 'POST');
  const listed = await call('GET', siteId, bearer(a.key));
  t.equal(listed.statusCode, 200, 'GET lists: the delivery engine keeps sending the site\'s events');
  t.same(listed.json().subscriptions.map((x: { id: string }) => x.id).sort(), [kept, removed].sort());
  const deleted = await call('DELETE', siteId, bearer(a.key), undefined, removed);
  t.equal(deleted.statusCode, 200, 'DELETE removes one');
  t.same(deleted.json(), { success: true });
  expectError(t, await call('DELETE', siteId, bearer(a.key), undefined, removed), 404, 'NOT_FOUND', 'gone');
  const patched = await app.fastify.inject({ method: 'PATCH', url: `${webhooksPath(siteId)}/${kept}`, headers: bearer(a.key), payload: { label: 'renamed' } });
  expectError(t, patched, 403, 'SITE_NOT_LICENSED', 'PATCH waits for a licence');
  await changeSiteSettings(app.services, { siteId, changes: { licensed: true } });
  await settle(app.services);
  t.equal((await call('POST', siteId, bearer(a.key))).statusCode, 201, 'licensed again: creates');
});

t.test('order of checks: 401 before 403 before 404 before 400', async (t) => {
  const readOnly = await keyWith(app.services, a.teamId, ['webhooks:read']);
  const unlicensed = await anotherSite(app.services, a.teamId, 'order.example.test');
  await changeSiteSettings(app.services, { siteId: unlicensed, changes: { licensed: false } });
  await settle(app.services);
  const bad = { label: 'x'.repeat(500), url: 'http://127.0.0.1', eventTypes: [] };
  expectError(t, await call('POST', b.siteId, {}, bad), 401, 'UNAUTHORIZED', 'no credential, foreign site, invalid body');
  expectError(t, await call('POST', 'nope', bearer(`svc_${'f'.repeat(64)}`), bad), 401, 'UNAUTHORIZED', 'unknown key, unknown site');
  const invalidJson = await app.fastify.inject({
    method: 'POST',
    url: webhooksPath(a.siteId),
    headers: { 'content-type': 'application/json' },
    payload: '{not json',
  });
  expectError(t, invalidJson, 401, 'UNAUTHORIZED', 'no credential, invalid JSON');
  expectError(t, await call('POST', b.siteId, bearer(readOnly.key), bad), 403, 'INSUFFICIENT_SCOPE', 'no scope, foreign site, invalid body');
  expectError(t, await call('POST', b.siteId, bearer(a.key), bad), 404, 'SITE_NOT_FOUND', 'foreign site, invalid body');
  expectError(t, await call('POST', unlicensed, bearer(a.key), bad), 403, 'SITE_NOT_LICENSED', 'unlicensed site, invalid body');
  expectError(t, await call('POST', a.siteId, bearer(a.key), bad), 400, 'VALIDATION_ERROR', 'everything fine but the body');
});

t.test('unknown routes and methods get the error envelope', async (t) => {
  expectError(t, await app.fastify.inject({ method: 'GET', url: '/api/v1/nope' }), 404, 'NOT_FOUND', 'unknown path');
  expectError(t, await app.fastify.inject({ method: 'GET', url: '/' }), 404, 'NOT_FOUND', 'root');
  // A path the API serves with other methods: 405 naming them (test/http/methodNotAllowed.test.ts).
  expectError(t, await app.fastify.inject({ method: 'PUT', url: webhooksPath(a.siteId), headers: bearer(a.key) }), 405, 'METHOD_NOT_ALLOWED', 'PUT');
  const one = await app.fastify.inject({ method: 'GET', url: `${webhooksPath(a.siteId)}/x`, headers: bearer(a.key) });
  expectError(t, one, 405, 'METHOD_NOT_ALLOWED', 'GET one');
  t.equal(one.headers.allow, 'DELETE, PATCH');
  expectError(t, await app.fastify.inject({ method: 'POST', url: '/api/v2/sites/x/outreach/webhooks', payload: {} }), 404, 'NOT_FOUND', 'v2');
});
