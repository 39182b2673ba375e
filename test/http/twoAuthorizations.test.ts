import { request } from 'node:http';
import t from 'tap';
import { webhooksPath } from '../helpers/http.ts';
import { INITIALIZE, startMcpApp } from '../mcp/helpers.ts';

// Node keeps the first of two Authorization headers and drops the rest; a proxy before the service
// may have judged the request by the other. Such a request is refused wherever a credential counts.
const metricsToken = 'metrics-token-0123456789';
const ctx = await startMcpApp({ env: { METRICS_TOKEN: metricsToken } });
t.teardown(() => ctx.app.close());
const { base, tenant } = ctx;
const key = `Bearer ${tenant.key}`;

/** One request over the wire: an array value is sent as that many header lines. */
function send(method: string, path: string, headers: Record<string, string | string[]>, body?: string) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

t.test('REST: the same key twice, or a good key and another, is 400 VALIDATION_ERROR with the invalid_request challenge', async (t) => {
  const one = await send('GET', webhooksPath(tenant.siteId), { authorization: key });
  t.equal(one.status, 200, 'one header: the key works');
  for (const [what, values] of [
    ['the same key twice', [key, key]],
    ['a good key, then a bad one', [key, 'Bearer svc_not_a_key']],
    ['a bad key, then a good one', ['Bearer svc_not_a_key', key]],
  ] as const) {
    const res = await send('GET', webhooksPath(tenant.siteId), { authorization: [...values] });
    // RFC 6750 §3.1: invalid_request is a 400 (a 401 would send an OAuth client back to sign in, to the same refusal).
    t.equal(res.status, 400, what);
    t.equal(res.headers['www-authenticate'], 'Bearer error="invalid_request"', `${what}: the challenge says why`);
    t.same(JSON.parse(res.body).error.code, 'VALIDATION_ERROR', what);
    t.match(JSON.parse(res.body).error.message, /one Authorization header/, what);
  }
  const write = await send('POST', webhooksPath(tenant.siteId), { authorization: [key, key], 'content-type': 'application/json' }, JSON.stringify({ url: 'https://example.com/hook', eventTypes: ['outreach.pitch_received'] }));
  t.equal(write.status, 400, 'a write too');
  const list = await send('GET', webhooksPath(tenant.siteId), { authorization: key });
  t.same(JSON.parse(list.body).subscriptions, [], 'and nothing was created');
});

t.test('MCP: two Authorization headers are 400 with the challenge naming invalid_request', async (t) => {
  const res = await send('POST', '/mcp', { authorization: ['Bearer a', 'Bearer b'], 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, JSON.stringify(INITIALIZE));
  t.equal(res.status, 400);
  t.equal(JSON.parse(res.body).error.code, 'VALIDATION_ERROR');
  t.match(String(res.headers['www-authenticate']), /^Bearer error="invalid_request", resource_metadata=".*", scope=".*", error_description="Send one Authorization header, not several\."$/);
});

t.test('OAuth token endpoint: two Basic client authentications are 400 invalid_request', async (t) => {
  const basic = (id: string) => `Basic ${Buffer.from(`${id}:secret`).toString('base64')}`;
  const res = await send('POST', '/oauth/token', { authorization: [basic('a'), basic('b')], 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=client_credentials');
  t.equal(res.status, 400);
  t.equal(JSON.parse(res.body).error, 'invalid_request');
  const one = await send('POST', '/oauth/token', { authorization: basic('a'), 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=client_credentials');
  t.not(JSON.parse(one.body).error, 'invalid_request', 'one header: judged on its merits (an unknown client)');
});

t.test('/metrics with METRICS_TOKEN: the token twice, or the token and another, is 400 with the challenge', async (t) => {
  const token = `Bearer ${metricsToken}`;
  t.equal((await send('GET', '/metrics', { authorization: token })).status, 200, 'one header: the token works');
  for (const values of [[token, token], ['Bearer wrong', token], [token, 'Bearer wrong']]) {
    const res = await send('GET', '/metrics', { authorization: values });
    t.equal(res.status, 400, values.join(' + '));
    t.equal(res.headers['www-authenticate'], 'Bearer error="invalid_request"');
    t.equal(JSON.parse(res.body).error.code, 'VALIDATION_ERROR');
  }
});
