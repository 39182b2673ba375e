import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { originAllowed } from '../../src/mcp/origin.ts';
import { INITIALIZE, obtainToken, rawMcp, startMcpApp } from './helpers.ts';

/**
 * MCP Streamable HTTP: "Servers MUST validate the Origin header on all incoming connections to
 * prevent DNS rebinding attacks ... If the Origin header is present and invalid, servers MUST
 * respond with HTTP 403 Forbidden." (From an MCP client audit: any origin was answered.)
 */
t.test('a browser page of another origin is refused with 403 before its token is looked at; own, loopback and configured origins pass', async (t) => {
  const ctx = await startMcpApp({ env: { MCP_ALLOWED_ORIGINS: 'https://assistant.example.test' } });
  t.teardown(() => ctx.app.close());
  const token = await obtainToken(ctx, { scope: 'inbox:read' });
  const auth = { authorization: `Bearer ${token}` };
  const post = (origin?: string, headers = auth) => rawMcp(ctx.mcpUrl, INITIALIZE, { ...headers, ...(origin ? { origin } : {}) });

  for (const origin of ['https://evil.example', 'http://rebound.example:3000', 'null', 'https://assistant.example.test.evil.example']) {
    const res = await post(origin);
    t.equal(res.status, 403, origin);
    t.match(await res.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, message: /^Forbidden: origin / } });
    const unauthenticated = await post(origin, { authorization: '' });
    t.equal(unauthenticated.status, 403, `${origin}, without a token: refused before the 401`);
    const preflight = await fetch(ctx.mcpUrl, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    t.equal(preflight.status, 403, `${origin}: its preflight too`);
    await preflight.arrayBuffer();
  }
  for (const origin of [undefined, new URL(ctx.base).origin, 'http://localhost:6274', 'http://127.0.0.1:8080', 'https://assistant.example.test']) {
    t.equal((await post(origin)).status, 200, origin ?? 'no Origin (a desktop client)');
  }
});

t.test('originAllowed and MCP_ALLOWED_ORIGINS', async (t) => {
  const base = 'https://outreach.example.com/base';
  t.ok(originAllowed('https://outreach.example.com', base, []));
  t.notOk(originAllowed('http://outreach.example.com', base, []), 'another scheme is another origin');
  t.ok(originAllowed('http://[::1]:9999', base, []));
  t.notOk(originAllowed('https://other.example', base, []));
  t.ok(originAllowed('https://other.example', base, ['*']));
  t.same(loadConfig({ MCP_ALLOWED_ORIGINS: ' https://a.example , https://b.example:8443' }).MCP_ALLOWED_ORIGINS, ['https://a.example', 'https://b.example:8443']);
  t.same(loadConfig({ MCP_ALLOWED_ORIGINS: '' }).MCP_ALLOWED_ORIGINS, []);
  for (const bad of ['https://a.example/', 'a.example', 'ftp://a.example', 'https://a.example/path']) {
    t.throws(() => loadConfig({ MCP_ALLOWED_ORIGINS: bad }), /MCP_ALLOWED_ORIGINS/, bad);
  }
});
