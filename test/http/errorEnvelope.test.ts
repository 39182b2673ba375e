import t from 'tap';
import { expectError, validBody, webhooksPath } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { hostPort, rawRequest } from './rawHttp.ts';

// Every error the service sends carries { error: { code, message } }, including those node and
// fastify answer before any route runs.
const app = await startTestApp({ listen: true });
t.teardown(() => app.close());
const tenant = await createTenant(app.services);
const { host, port } = hostPort(app.url);

t.test('a path parameter over the maximum length answers 414 in the envelope', async (t) => {
  const res = await rawRequest(app.url, `GET ${webhooksPath('s'.repeat(1_001))} HTTP/1.1\r\nHost: ${host}:${port}\r\nAuthorization: Bearer ${tenant.key}\r\nConnection: close\r\n\r\n`);
  expectError(t, res, 414, 'URI_TOO_LONG');
});

t.test('an oversized header block answers 431 in the envelope', async (t) => {
  const res = await rawRequest(app.url, `GET /healthz HTTP/1.1\r\nHost: ${host}:${port}\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
  expectError(t, res, 431, 'HEADERS_TOO_LARGE');
});

t.test('a malformed request line answers 400 in the envelope', async (t) => {
  const res = await rawRequest(app.url, `GET /healthz HTTP/1.1\r\nHost: ${host}:${port}\r\nBad Header Without Colon\r\n\r\n`);
  expectError(t, res, 400, 'VALIDATION_ERROR');
});

t.test('a body with bad syntax or a prototype-poisoning key: 400 naming both', async (t) => {
  for (const payload of ['{"url": ', '{"__proto__": {"admin": true}, "url": "https://hooks.example.com/h"}', '{"constructor": {"prototype": {"admin": true}}}']) {
    const res = await app.fastify.inject({
      method: 'POST',
      url: webhooksPath(tenant.siteId),
      headers: { ...bearer(tenant.key), 'content-type': 'application/json' },
      payload,
    });
    expectError(t, res, 400, 'VALIDATION_ERROR', payload);
    t.match(res.json().error.message, /not valid JSON, or holds a "__proto__" key/, payload);
  }
});

t.test('a Content-Type with a charset other than UTF-8 is refused with 415', async (t) => {
  for (const charset of ['iso-8859-1', 'utf-16', '"windows-1252"', 'US-ASCII']) {
    const res = await app.fastify.inject({
      method: 'POST',
      url: webhooksPath(tenant.siteId),
      headers: { ...bearer(tenant.key), 'content-type': `application/json; charset=${charset}` },
      payload: JSON.stringify(validBody()),
    });
    expectError(t, res, 415, 'UNSUPPORTED_MEDIA_TYPE', charset);
  }
  const token = await app.fastify.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=latin1' },
    payload: 'grant_type=client_credentials',
  });
  // The OAuth endpoints answer in RFC 6749 §5.2's shape, as their other refusals.
  t.equal(token.statusCode, 400, 'the token endpoint too');
  t.match(token.json(), { error: 'invalid_request', error_description: /must be UTF-8; the Content-Type declares charset "latin1"/ });
  const page = await app.fastify.inject({ method: 'POST', url: '/dashboard/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=latin1' }, payload: 'email=a' });
  t.equal(page.statusCode, 415, 'a page: 415');
  t.match(page.headers['content-type'], /^text\/html/);
  t.match(page.body, /must be UTF-8/);
  for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8']) {
    const res = await app.fastify.inject({
      method: 'POST',
      url: webhooksPath(tenant.siteId),
      headers: { ...bearer(tenant.key), 'content-type': `application/json; charset=${charset}` },
      payload: JSON.stringify(validBody({ label: `utf8 ${charset}` })),
    });
    t.equal(res.statusCode, 201, `charset=${charset} is accepted`);
  }
});

t.test('what a client sent is quoted back cut short: an unknown query key, an unknown route', async (t) => {
  const key = 'k'.repeat(10_000);
  const res = await app.fastify.inject({ method: 'GET', url: `/api/v1/sites/${tenant.siteId}/outreach/conversations?${key}=1`, headers: bearer(tenant.key) });
  expectError(t, res, 400, 'VALIDATION_ERROR', 'an unknown key');
  t.ok(res.json().error.message.length <= 1_001, `${res.json().error.message.length} characters`);
  t.match(res.json().error.message, /…$/);
  const route = await app.fastify.inject({ method: 'GET', url: `/api/v1/${'p'.repeat(5_000)}` });
  expectError(t, route, 404, 'NOT_FOUND', 'an unknown route');
  t.ok(route.json().error.message.length < 300, `${route.json().error.message.length} characters`);
});

t.test('a body that is not UTF-8, or comes compressed, is refused and nothing is stored', async (t) => {
  const before = (await app.services.events.headPosition());
  const bad = Buffer.concat([Buffer.from('{"label":"x'), Buffer.from([0xff, 0xfe]), Buffer.from('","url":"https://example.com/h","eventTypes":["outreach.reply_sent"]}')]);
  const res = await app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: { ...bearer(tenant.key), 'content-type': 'application/json' }, payload: bad });
  expectError(t, res, 400, 'VALIDATION_ERROR', 'bytes that are not UTF-8');
  t.match(res.json().error.message, /not valid UTF-8/);
  for (const encoding of ['gzip', 'deflate', 'br', 'GZIP ']) {
    const compressed = await app.fastify.inject({
      method: 'POST',
      url: webhooksPath(tenant.siteId),
      headers: { ...bearer(tenant.key), 'content-type': 'application/json', 'content-encoding': encoding },
      payload: JSON.stringify(validBody({ label: `encoded ${encoding}` })),
    });
    expectError(t, compressed, 415, 'UNSUPPORTED_MEDIA_TYPE', encoding);
    t.equal(compressed.headers['accept-encoding'], 'identity', `${encoding}: names what is accepted`);
  }
  t.equal(await app.services.events.headPosition(), before, 'nothing appended');
  const noBody = await app.fastify.inject({ method: 'GET', url: webhooksPath(tenant.siteId), headers: { ...bearer(tenant.key), 'content-encoding': 'gzip' } });
  t.equal(noBody.statusCode, 200, 'a request without a body is not refused for the header');
  const plain = await app.fastify.inject({
    method: 'POST',
    url: webhooksPath(tenant.siteId),
    headers: { ...bearer(tenant.key), 'content-type': 'application/json', 'content-encoding': 'identity' },
    payload: JSON.stringify(validBody({ label: 'identity, and ünïcødé ✓' })),
  });
  t.equal(plain.statusCode, 201, 'Content-Encoding: identity is no encoding');
  t.equal(plain.json().subscription.label, 'identity, and ünïcødé ✓');
});

t.test('a form body that is not UTF-8 is refused too: the token endpoint and the dashboard', async (t) => {
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const bad = Buffer.concat([Buffer.from('grant_type=client_credentials&client_id=caf'), Buffer.from([0xe9])]);
  const token = await app.fastify.inject({ method: 'POST', url: '/oauth/token', headers: form, payload: bad });
  t.equal(token.statusCode, 400);
  t.match(token.json(), { error: 'invalid_request', error_description: /not valid UTF-8/ });
  const page = await app.fastify.inject({ method: 'POST', url: '/dashboard/sign-in', headers: form, payload: Buffer.concat([Buffer.from('email=a'), Buffer.from([0xff])]) });
  t.equal(page.statusCode, 400, 'a page: 400');
  t.match(page.headers['content-type'], /^text\/html/);
  t.match(page.body, /not valid UTF-8/);
  const percentEncoded = await app.fastify.inject({ method: 'POST', url: '/oauth/token', headers: form, payload: 'grant_type=client_credentials&client_id=caf%E9' });
  t.equal(percentEncoded.statusCode, 400, 'percent-encoded bytes that are not UTF-8 too');
  t.match(percentEncoded.json(), { error: 'invalid_request', error_description: /a percent-encoded part is not UTF-8/ });
  // UTF-8 is parsed as before: percent-encoded or raw, a repeated field as a list.
  const good = await app.fastify.inject({ method: 'POST', url: '/oauth/token', headers: form, payload: 'grant_type=x&client_id=caf%C3%A9&client_id=café' });
  t.equal(good.statusCode, 400);
  t.same(good.json(), { error: 'invalid_request', error_description: 'Parameter client_id is repeated.' }, 'read, and found repeated');
});

t.test("the browser's pages answer what no route takes with a page, the API with its envelope", async (t) => {
  for (const [url, method, status] of [
    ['/dashboard/nope', 'GET', 404],
    ['/dashboard/inbox', 'PUT', 404],
    [`/dashboard/inbox/${tenant.siteId}/${'c'.repeat(5_000)}`, 'GET', 414],
    ['/dashboard/%E0%A4%A', 'GET', 400],
    ['/oauth/authorize/more', 'GET', 404],
  ] as const) {
    const res = await app.fastify.inject({ method, url });
    t.equal(res.statusCode, status, `${method} ${url.slice(0, 60)}`);
    t.match(res.headers['content-type'], /^text\/html/, 'a page');
    t.equal(res.headers['x-frame-options'], 'DENY', 'with the pages\' headers');
    t.equal(res.headers['cache-control'], 'no-store');
  }
  const api = await app.fastify.inject({ method: 'GET', url: '/api/v1/nope' });
  expectError(t, api, 404, 'NOT_FOUND', 'the API keeps its envelope');
  const dashboardLike = await app.fastify.inject({ method: 'GET', url: '/dashboards' });
  t.match(dashboardLike.headers['content-type'], /^application\/json/, 'a path that only begins like one is no page');
});

t.test('webhook URLs with control characters, a lone surrogate or port 0 are refused at creation', async (t) => {
  const urls = {
    'a NUL': 'https://example.com/\u0000hook',
    'a tab inside the host': 'https://exam\tple.com/hook',
    'a newline in the path': 'https://example.com/ho\nok',
    'a DEL': 'https://example.com/\u007fhook',
    'a C1 control': 'https://example.com/\u0085hook',
    'a lone high surrogate': 'https://example.com/\ud800hook',
    'a lone low surrogate': 'https://example.com/hook\udc00',
    'port 0': 'https://example.com:0/hook',
    'port 0 written 00': 'https://example.com:00/hook',
  };
  for (const [what, url] of Object.entries(urls)) {
    const res = await app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: bearer(tenant.key), payload: validBody({ url }) });
    expectError(t, res, 400, 'VALIDATION_ERROR', what);
  }
  const fine = await app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: bearer(tenant.key), payload: validBody({ url: 'https://example.com/h%C3%A9/\u00e9?x=%F0%9F%98%80' }) });
  t.equal(fine.statusCode, 201, 'percent-escapes and well-formed non-ASCII are fine');
});

t.test('a refused credential gets the RFC 6750 challenge: 401 with WWW-Authenticate (it had none), 403 naming the scope', async (t) => {
  const narrow = await createTenant(app.services, { scopes: ['inbox:read'] });
  const url = webhooksPath(narrow.siteId);
  const challenge = async (headers: Record<string, string>) => {
    const res = await app.fastify.inject({ method: 'GET', url, headers });
    return [res.statusCode, res.headers['www-authenticate']];
  };
  t.same(await challenge({}), [401, 'Bearer'], 'no credential: the scheme, no error code');
  t.same(await challenge({ authorization: 'Basic Zm9vOmJhcg==' }), [401, 'Bearer'], 'another scheme: the same');
  t.same(await challenge({ authorization: 'Bearer svc_not_a_key' }), [401, 'Bearer error="invalid_token"'], 'a bad bearer token');
  t.same(await challenge(bearer(narrow.key)), [403, 'Bearer error="insufficient_scope", scope="webhooks:read"'], 'a key without the scope');
});
