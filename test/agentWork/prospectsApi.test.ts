import t from 'tap';
import { loadProspects } from '../../src/commands/prospects.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { anotherSite, expectError, keyWith } from '../helpers/http.ts';

const app = await startTestApp();
t.teardown(() => app.close());
const a = await createTenant(app.services, { plan: 'advanced' });
const b = await createTenant(app.services, { plan: 'advanced' });
const path = (siteId: string) => `/api/v1/sites/${siteId}/agents/outreach/prospects`;
const post = (siteId: string, key: string, payload: unknown, contentType = 'application/json') =>
  app.fastify.inject({ method: 'POST', url: path(siteId), headers: { ...bearer(key), 'content-type': contentType }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });

t.test('JSON, a bare list or CSV: new prospects 201, the same again 200', async (t) => {
  const first = await post(a.siteId, a.key, { prospects: [{ url: 'https://roastweekly.example/', name: 'Roast Weekly' }, { url: 'beanblog.example', notes: 'met at a fair' }] });
  t.equal(first.statusCode, 201, first.body);
  t.match(first.json(), { importId: /^[0-9A-Z]{26}$/, imported: 2, unchanged: 0 });
  const again = await post(a.siteId, a.key, [{ url: 'https://roastweekly.example', name: 'Roast Weekly' }]);
  t.equal(again.statusCode, 200);
  t.same(again.json(), { importId: null, imported: 0, unchanged: 1 });
  const csv = await post(a.siteId, a.key, 'url,name,notes\r\nhttps://cupping.example,"Cupping, Daily",\r\nhttps://roastweekly.example/,Roast Weekly,\r\n', 'text/csv; charset=utf-8');
  t.equal(csv.statusCode, 201, csv.body);
  t.match(csv.json(), { imported: 1, unchanged: 1 });
  const state = await loadProspects(app.services, a.siteId);
  t.same([...state.prospects.values()].map((p) => [p.url, p.name, p.notes, p.status]), [
    ['https://roastweekly.example', 'Roast Weekly', null, 'new'],
    ['https://beanblog.example', null, 'met at a fair', 'new'],
    ['https://cupping.example', 'Cupping, Daily', null, 'new'],
  ]);
});

t.test('bad lists are 400 VALIDATION_ERROR naming what is wrong', async (t) => {
  const badCsv = await post(a.siteId, a.key, 'url\nhttps://ok.example\nhttp://plain.example\n', 'text/csv');
  expectError(t, badCsv, 400, 'VALIDATION_ERROR', 'http URL in CSV');
  t.match(badCsv.json().error.message, /line 3: "http:\/\/plain\.example" is not an https URL/);
  expectError(t, await post(a.siteId, a.key, { prospects: [] }), 400, 'VALIDATION_ERROR', 'empty list');
  expectError(t, await post(a.siteId, a.key, { prospects: [{ url: 'https://x.example', colour: 'red' }] }), 400, 'VALIDATION_ERROR', 'unknown key');
  expectError(t, await post(a.siteId, a.key, { prospects: [{ url: 'javascript:alert(1)' }] }), 400, 'VALIDATION_ERROR', 'not https');
  expectError(t, await post(a.siteId, a.key, '', 'text/csv'), 400, 'VALIDATION_ERROR', 'empty CSV');
  const latin1 = await app.fastify.inject({ method: 'POST', url: path(a.siteId), headers: { ...bearer(a.key), 'content-type': 'text/csv' }, payload: Buffer.from('url,name\nhttps://cafe.example,Caf\xe9\n', 'latin1') });
  expectError(t, latin1, 400, 'VALIDATION_ERROR', 'a CSV in Latin-1');
  t.match(latin1.json().error.message, /not valid UTF-8/);
  expectError(t, await post(a.siteId, a.key, '{"prospects": [', 'application/json'), 400, 'VALIDATION_ERROR', 'broken JSON');
});

t.test('access: credentials, scope, tenant, plan', async (t) => {
  const list = { prospects: [{ url: 'https://x.example' }] };
  expectError(t, await app.fastify.inject({ method: 'POST', url: path(a.siteId), payload: list }), 401, 'UNAUTHORIZED');
  const readOnly = await keyWith(app.services, a.teamId, ['agents:read', 'inbox:write']);
  const refused = await post(a.siteId, readOnly.key, list);
  expectError(t, refused, 403, 'INSUFFICIENT_SCOPE');
  t.match(refused.json().error.message, /agents:write/);
  expectError(t, await post(b.siteId, a.key, list), 404, 'SITE_NOT_FOUND', "another team's site");
  expectError(t, await post('no-such-site', a.key, list), 404, 'SITE_NOT_FOUND');
  const pro = await anotherSite(app.services, a.teamId, 'pro.example.test');
  const restricted = await keyWith(app.services, a.teamId, ['agents:write'], pro);
  expectError(t, await post(a.siteId, restricted.key, list), 404, 'SITE_NOT_FOUND', 'a key restricted to another site (as the inbox routes answer)');
  const onPro = await post(pro, a.key, list);
  expectError(t, onPro, 403, 'PLAN_REQUIRED', 'outreach needs Advanced');
  t.match(onPro.json().error.message, /Advanced plan/);
  expectError(t, await post(pro, a.key, { prospects: 'not a list' }), 403, 'PLAN_REQUIRED', 'the plan before the body, as the agent endpoints');
});
