import { type IncomingMessage, type ServerResponse, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { discoverOAuthServerInfo } from '@modelcontextprotocol/sdk/client/auth.js';
import { startTestApp } from '../helpers/testApp.ts';

/**
 * A reverse proxy serving the service under `/outreach`: it strips that prefix from `/outreach/…`
 * and hands the host's root `/.well-known/…` paths to the service unchanged (the README's rule).
 */
async function startPathProxy(target: () => string): Promise<{ origin: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    seen.push(url);
    const path = url.startsWith('/outreach/') ? url.slice('/outreach'.length) : url.startsWith('/.well-known/') ? url : null;
    if (path === null) {
      res.writeHead(404).end();
      return;
    }
    const upstream = httpRequest(`${target()}${path}`, { method: req.method, headers: { ...req.headers, host: new URL(target()).host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

t.test('PUBLIC_BASE_URL with a path: a stock MCP SDK client discovers the resource and the authorization server through the proxy', async (t) => {
  let appUrl = '';
  const proxy = await startPathProxy(() => appUrl);
  t.teardown(() => proxy.close());
  const base = `${proxy.origin}/outreach`;
  const app = await startTestApp({ listen: true, env: { PUBLIC_BASE_URL: base } });
  t.teardown(() => app.close());
  appUrl = app.url;

  const info = await discoverOAuthServerInfo(`${base}/mcp`);
  t.equal(info.resourceMetadata?.resource, `${base}/mcp`, 'the protected-resource metadata names the MCP resource');
  t.equal(info.authorizationServerUrl, base, 'and the issuer');
  t.equal(info.authorizationServerMetadata?.issuer, base, 'the authorization server metadata was found');
  t.equal(info.authorizationServerMetadata?.token_endpoint, `${base}/oauth/token`);
  t.ok(proxy.seen.includes('/.well-known/oauth-authorization-server/outreach'), 'at the RFC 8414 location, the only one the SDK reads for an issuer with a path');
  t.ok(proxy.seen.includes('/.well-known/oauth-protected-resource/outreach/mcp'), 'the resource metadata at the RFC 9728 location');

  // The same documents under the base path (a proxy that forwards only /outreach/…), with their preflights.
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/mcp']) {
    t.equal((await fetch(`${base}${path}`)).status, 200, `${base}${path}`);
  }
  for (const path of ['/.well-known/oauth-authorization-server/outreach', '/.well-known/oauth-protected-resource/outreach/mcp']) {
    t.equal((await fetch(`${proxy.origin}${path}`, { method: 'OPTIONS' })).status, 204, `preflight of ${path}`);
  }
});
