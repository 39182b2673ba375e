import t from 'tap';
import type { Scope } from '../../src/domain/scopes.ts';
import { bearer } from '../helpers/testApp.ts';
import { anotherSite, expectError, keyWith } from '../helpers/http.ts';
import { ingest, PITCH } from '../ingestion/helpers.ts';
import { Browser, obtainCode, registerClient, startOAuthApp, tokenRequest } from '../oauth/helpers.ts';
import { createTenant } from '../helpers/testApp.ts';

// Every inbox read route and the suppression routes × every way a credential can fail to reach them.
const { app, tenant: a, ownerEmail, issuer } = await startOAuthApp();
t.teardown(() => app.close());
const b = await createTenant(app.services);

const pitched = await ingest(app.fastify, a, PITCH);
const { conversationIds, opportunityIds } = pitched.json() as { conversationIds: string[]; opportunityIds: string[] };
const base = (siteId: string) => `/api/v1/sites/${siteId}/outreach`;

interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  path: (siteId: string) => string;
  scope: Scope;
  payload?: object;
  ok: number;
}
const ROUTES: Route[] = [
  { method: 'GET', path: (s) => `${base(s)}/conversations`, scope: 'inbox:read', ok: 200 },
  { method: 'GET', path: (s) => `${base(s)}/conversations/${conversationIds[0]}`, scope: 'inbox:read', ok: 200 },
  { method: 'GET', path: (s) => `${base(s)}/opportunities`, scope: 'opportunities:read', ok: 200 },
  { method: 'GET', path: (s) => `${base(s)}/opportunities/${opportunityIds[0]}`, scope: 'opportunities:read', ok: 200 },
  { method: 'GET', path: (s) => `${base(s)}/suppressions`, scope: 'inbox:read', ok: 200 },
  { method: 'POST', path: (s) => `${base(s)}/suppressions`, scope: 'inbox:write', payload: { email: 'x@blocked.test' }, ok: 201 },
  { method: 'DELETE', path: (s) => `${base(s)}/suppressions/nobody@blocked.test`, scope: 'inbox:write', ok: 404 },
];
const call = (route: Route, siteId: string, headers: Record<string, string>) =>
  app.fastify.inject({ method: route.method, url: route.path(siteId), headers, ...(route.payload ? { payload: route.payload } : {}) });
const name = (r: Route) => `${r.method} ${r.path(':site').replace(/.*outreach/, '')}`;

t.test('the owner key reaches every route', async (t) => {
  for (const route of ROUTES) t.equal((await call(route, a.siteId, bearer(a.key))).statusCode, route.ok, name(route));
});

t.test('401 UNAUTHORIZED without a credential or with an unknown one', async (t) => {
  for (const route of ROUTES) {
    expectError(t, await call(route, a.siteId, {}), 401, 'UNAUTHORIZED', `${name(route)} no credential`);
    expectError(t, await call(route, a.siteId, bearer(`svc_${'0'.repeat(64)}`)), 401, 'UNAUTHORIZED', `${name(route)} unknown key`);
  }
});

t.test('403 INSUFFICIENT_SCOPE with every scope but the one the route needs', async (t) => {
  const all: Scope[] = ['analytics:read', 'opportunities:read', 'articles:read', 'articles:write', 'agents:read', 'agents:write', 'inbox:read', 'inbox:write', 'webhooks:read', 'webhooks:write'];
  for (const route of ROUTES) {
    const key = await keyWith(app.services, a.teamId, all.filter((s) => s !== route.scope));
    const res = await call(route, a.siteId, bearer(key.key));
    expectError(t, res, 403, 'INSUFFICIENT_SCOPE', name(route));
    t.match(res.json().error.message, route.scope, 'names the scope');
  }
});

t.test("404 SITE_NOT_FOUND: another team's key, another team's site, a key restricted to another site", async (t) => {
  const second = await anotherSite(app.services, a.teamId);
  const restricted = await keyWith(app.services, a.teamId, ['inbox:read', 'inbox:write', 'opportunities:read'], second);
  for (const route of ROUTES) {
    expectError(t, await call(route, a.siteId, bearer(b.key)), 404, 'SITE_NOT_FOUND', `${name(route)} team B key on team A site`);
    expectError(t, await call(route, b.siteId, bearer(a.key)), 404, 'SITE_NOT_FOUND', `${name(route)} team A key on team B site`);
    expectError(t, await call(route, a.siteId, bearer(restricted.key)), 404, 'SITE_NOT_FOUND', `${name(route)} key restricted to another site`);
    expectError(t, await call(route, 'no-such-site', bearer(a.key)), 404, 'SITE_NOT_FOUND', `${name(route)} unknown site`);
  }
});

t.test("404 NOT_FOUND for another site's conversation or opportunity on a reachable site", async (t) => {
  const second = await anotherSite(app.services, a.teamId, 'third.example.test');
  expectError(t, await app.fastify.inject({ url: `${base(second)}/conversations/${conversationIds[0]}`, headers: bearer(a.key) }), 404, 'NOT_FOUND', 'conversation');
  expectError(t, await app.fastify.inject({ url: `${base(second)}/opportunities/${opportunityIds[0]}`, headers: bearer(a.key) }), 404, 'NOT_FOUND', 'opportunity');
  expectError(t, await app.fastify.inject({ url: `${base(a.siteId)}/conversations/01ARZ3NDEKTSV4RRFFQ69G5FAV`, headers: bearer(a.key) }), 404, 'NOT_FOUND', 'unknown id');
});

t.test('an OAuth token without the site in its grant gets 404 SITE_NOT_FOUND; on its site it works', async (t) => {
  const second = await anotherSite(app.services, a.teamId, 'granted.example.test');
  const client = await registerClient(app, a, 'none');
  const browser = new Browser(issuer);
  t.equal((await browser.signIn(ownerEmail)).status, 303);
  const code = await obtainCode(browser, issuer, client, [second], { scope: 'inbox:read inbox:write opportunities:read' });
  const tokens = await tokenRequest(issuer, { grant_type: 'authorization_code', client_id: client.clientId, code: code.code, redirect_uri: code.redirectUri, code_verifier: code.verifier });
  const token = tokens.json.access_token as string;
  for (const route of ROUTES) {
    expectError(t, await call(route, a.siteId, bearer(token)), 404, 'SITE_NOT_FOUND', `${name(route)} site outside the grant`);
  }
  t.equal((await call(ROUTES[0]!, second, bearer(token))).statusCode, 200, 'the granted site');
});

t.test('the routes are in the OpenAPI document', async (t) => {
  const doc = (await app.fastify.inject({ url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  for (const p of ['conversations', 'conversations/{conversationId}', 'opportunities', 'opportunities/{opportunityId}', 'suppressions', 'suppressions/{email}']) {
    t.ok(doc.paths[`/api/v1/sites/{siteId}/outreach/${p}`], p);
  }
  t.ok(doc.paths['/api/v1/sites/{siteId}/outreach/conversations']!.get, 'GET conversations');
});

t.test("a conversation's opportunity is shown to a credential that may read opportunities only (an inbox:read key could read it there)", async (t) => {
  const url = `${base(a.siteId)}/conversations/${conversationIds[0]}`;
  const inboxOnly = (await keyWith(app.services, a.teamId, ['inbox:read'])).key;
  const withOpportunities = (await keyWith(app.services, a.teamId, ['inbox:read', 'opportunities:read'])).key;
  const seen = async (key: string) => (await app.fastify.inject({ method: 'GET', url, headers: bearer(key) })).json().conversation;
  const withheld = await seen(inboxOnly);
  t.equal(withheld.opportunity, null, 'withheld from inbox:read alone');
  t.equal(withheld.opportunityId, opportunityIds[0], 'its id is still there');
  t.match((await seen(withOpportunities)).opportunity, { id: opportunityIds[0] }, 'shown with opportunities:read');
});
