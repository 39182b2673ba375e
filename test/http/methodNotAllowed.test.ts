import t from 'tap';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { expectError, webhooksPath } from '../helpers/http.ts';

// RFC 9110 §15.5.6: a path the API serves with other methods is 405 with Allow, not a missing resource.
const app = await startTestApp();
t.teardown(() => app.close());
const tenant = await createTenant(app.services);

t.test('a method the path does not take: 405 METHOD_NOT_ALLOWED naming the methods it takes', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['PUT', webhooksPath(tenant.siteId), 'GET, HEAD, POST'],
    ['DELETE', webhooksPath(tenant.siteId), 'GET, HEAD, POST'],
    ['GET', `${webhooksPath(tenant.siteId)}/01ARZ3NDEKTSV4RRFFQ69G5FAV/rotate-secret`, 'POST'],
    ['PATCH', `/api/v1/sites/${tenant.siteId}/outreach/inbox/messages`, 'POST'],
    ['POST', `/api/v1/sites/${tenant.siteId}/outreach/conversations`, 'GET, HEAD'],
  ];
  for (const [method, url, allow] of cases) {
    const res = await app.fastify.inject({ method: method as 'PUT', url, headers: bearer(tenant.key) });
    expectError(t, res, 405, 'METHOD_NOT_ALLOWED', `${method} ${url}`);
    t.equal(res.headers.allow, allow, `${method}: Allow`);
    t.match(res.json().error.message, `it answers ${allow}`);
  }
  const anonymous = await app.fastify.inject({ method: 'PUT', url: webhooksPath(tenant.siteId) });
  t.equal(anonymous.statusCode, 405, 'the same without a credential: the routes are public in the OpenAPI document');
});

t.test('a path no route serves stays 404 NOT_FOUND; the routes themselves answer as before', async (t) => {
  for (const url of ['/api/v1/nothing', `${webhooksPath(tenant.siteId)}/`, `${webhooksPath(tenant.siteId)}/a/b/c`, '/api/v1/sites']) {
    expectError(t, await app.fastify.inject({ method: 'PUT', url, headers: bearer(tenant.key) }), 404, 'NOT_FOUND', url);
  }
  t.equal((await app.fastify.inject({ url: webhooksPath(tenant.siteId), headers: bearer(tenant.key) })).statusCode, 200);
  t.equal((await app.fastify.inject({ method: 'HEAD', url: webhooksPath(tenant.siteId), headers: bearer(tenant.key) })).statusCode, 200, 'HEAD, which Allow names');
});

t.test('segments are compared percent-decoded, as the router matches them', async (t) => {
  const encoded = `/api/v1/sites/${tenant.siteId}/outreach/webhook%73`;
  t.equal((await app.fastify.inject({ url: encoded, headers: bearer(tenant.key) })).statusCode, 200, 'GET webhook%73 is the webhooks route');
  const put = await app.fastify.inject({ method: 'PUT', url: encoded, headers: bearer(tenant.key) });
  expectError(t, put, 405, 'METHOD_NOT_ALLOWED', 'so PUT on it is 405, not 404');
  t.equal(put.headers.allow, 'GET, HEAD, POST');
  const slashInId = await app.fastify.inject({ method: 'PUT', url: '/api/v1/sites/a%2Fb/outreach/webhooks', headers: bearer(tenant.key) });
  t.equal(slashInId.statusCode, 405, 'an encoded slash stays inside its segment');
  expectError(t, await app.fastify.inject({ method: 'PUT', url: '/api/v1/sites/%E0%A4%A/outreach/webhooks', headers: bearer(tenant.key) }), 400, 'VALIDATION_ERROR', 'a segment that does not decode is the bad URL 400 before');
});
