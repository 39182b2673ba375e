import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { GRANT_TOOLS, MCP_TOOLS } from '../../src/mcp/tools/index.ts';
import { TestClock, createTenant } from '../helpers/testApp.ts';
import { anotherSite, expectError, settle } from '../helpers/http.ts';
import { ingest, PITCH } from '../ingestion/helpers.ts';
import { tokenRequest, pkce, authorizeUrl, registerClient } from '../oauth/helpers.ts';
import { INITIALIZE, REDIRECT_URI, callTool, connectWithToken, obtainToken, rawMcp, startMcpApp, toolAnswer } from './helpers.ts';

const clock = new TestClock(new Date());
const ctx = await startMcpApp({ clock });
t.teardown(() => ctx.app.close());
const { base, mcpUrl, tenant } = ctx;
const MCP_SCOPES = 'inbox:read inbox:write opportunities:read agents:read agents:write articles:write';
const pitched = (await ingest(ctx.app.fastify, tenant, PITCH)).json() as { conversationIds: string[]; opportunityIds: string[] };
const conversationId = pitched.conversationIds[0]!;

/** Arguments each tool accepts (so that only the check under test can refuse the call). */
const argsFor = (name: string, siteId: string): Record<string, unknown> => {
  switch (name) {
    case 'get_conversation':
    case 'take_over_conversation':
    case 'hand_back_conversation':
    case 'mark_conversation_read':
    case 'mark_conversation_unread':
      return { siteId, conversationId };
    case 'reply_to_conversation':
      return { siteId, conversationId, text: 'Thanks!' };
    case 'change_conversation_status':
      return { siteId, conversationId, status: 'resolved' };
    case 'get_opportunity':
      return { siteId, opportunityId: pitched.opportunityIds[0] };
    case 'update_agent':
      return { siteId, agentKey: 'ai_prompt', isActive: true };
    case 'run_agent':
      return { siteId, agentKey: 'ai_prompt' };
    case 'sync_article':
      return { siteId, url: 'https://example.test/blog/access', title: 'Access', text: 'A paragraph.' };
    default:
      return { siteId };
  }
};

const toResponseLike = async (res: Response) => ({ statusCode: res.status, headers: Object.fromEntries(res.headers), body: await res.text() });
const resourceMetadata = `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`;

t.test('no token: 401 UNAUTHORIZED whose challenge leads to the protected-resource metadata and names the scopes', async (t) => {
  const res = await rawMcp(mcpUrl, INITIALIZE);
  const challenge = res.headers.get('www-authenticate') ?? '';
  expectError(t, await toResponseLike(res), 401, 'UNAUTHORIZED');
  t.match(challenge, /^Bearer /);
  t.match(challenge, resourceMetadata);
  t.match(challenge, `scope="${MCP_SCOPES}"`);
  t.notMatch(challenge, 'error=', 'no error code when no token was sent (RFC 6750 §3.1)');

  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    const doc = (await (await fetch(base + path)).json()) as Record<string, unknown>;
    t.same(
      { resource: doc.resource, authorization_servers: doc.authorization_servers, scopes_supported: doc.scopes_supported, bearer_methods_supported: doc.bearer_methods_supported },
      { resource: `${base}/mcp`, authorization_servers: [base], scopes_supported: MCP_SCOPES.split(' '), bearer_methods_supported: ['header'] },
      path,
    );
  }
});

t.test('another scheme than Bearer gets the challenge without an error code (RFC 6750 §3.1)', async (t) => {
  const res = await rawMcp(mcpUrl, INITIALIZE, { authorization: 'Basic Zm9vOmJhcg==' });
  t.equal(res.status, 401);
  const challenge = res.headers.get('www-authenticate') ?? '';
  t.match(challenge, resourceMetadata);
  t.notMatch(challenge, 'error=', 'no error code: it presented no bearer token (it named invalid_token)');
});

t.test('an API key is refused with 401 and the challenge, even with every scope', async (t) => {
  const res = await rawMcp(mcpUrl, INITIALIZE, { authorization: `Bearer ${tenant.key}` });
  const challenge = res.headers.get('www-authenticate') ?? '';
  const body = await toResponseLike(res);
  expectError(t, body, 401, 'UNAUTHORIZED');
  t.match(JSON.parse(body.body).error.message, /API key/);
  t.match(challenge, 'error="invalid_token"');
  t.match(challenge, resourceMetadata);
  t.match(challenge, 'scope=');
});

t.test('only tokens issued for this resource: another resource or none is 401; an unknown resource is never issued (invalid_target)', async (t) => {
  const forService = await obtainToken(ctx, { scope: MCP_SCOPES, resource: base });
  const noResource = await obtainToken(ctx, { scope: MCP_SCOPES, resource: null });
  for (const [what, token] of [
    ['a token for the service as a whole', forService],
    ['a token naming no resource', noResource],
  ] as const) {
    const res = await rawMcp(mcpUrl, INITIALIZE, { authorization: `Bearer ${token}` });
    t.equal(res.status, 401, what);
    t.match(res.headers.get('www-authenticate'), /error="invalid_token".*resource_metadata=/, `${what}: challenge`);
    const rest = await fetch(`${base}/api/v1/sites/${tenant.siteId}/outreach/opportunities`, { headers: { authorization: `Bearer ${token}` } });
    t.equal(rest.status, 200, `${what} still works on the REST API`);
  }

  // The authorization endpoint refuses a resource this server does not serve.
  const client = await registerClient(ctx.app, tenant, 'none', [REDIRECT_URI]);
  const url = new URL(authorizeUrl(base, { client_id: client.clientId, scope: MCP_SCOPES, code_challenge: pkce().challenge, redirect_uri: REDIRECT_URI }));
  url.searchParams.set('resource', 'https://other.example/mcp');
  const refused = await ctx.browser.request(url.toString());
  t.equal(refused.status, 303);
  t.equal(new URL(refused.location!).searchParams.get('error'), 'invalid_target');

  // The token endpoint refuses a resource other than the grant's.
  const { verifier, challenge } = pkce();
  const ok = new URL(authorizeUrl(base, { client_id: client.clientId, scope: MCP_SCOPES, code_challenge: challenge, redirect_uri: REDIRECT_URI }));
  ok.searchParams.set('resource', `${base}/mcp`);
  const consent = await ctx.browser.consent(ok.toString(), 'approve', [tenant.siteId]);
  const code = new URL(consent.location!).searchParams.get('code')!;
  const exchange = (resource: string) =>
    tokenRequest(base, { grant_type: 'authorization_code', client_id: client.clientId, code, redirect_uri: REDIRECT_URI, code_verifier: verifier, resource });
  const other = await exchange(base);
  t.equal(other.status, 400);
  t.equal(other.json.error, 'invalid_target');
  const same = await exchange(`${base}/mcp/`);
  t.equal(same.status, 200, 'the same resource (trailing slash aside) is fine');
});

t.test('a token without the scope a tool needs: HTTP 403 insufficient_scope naming it (step-up); other tools still work', async (t) => {
  for (const tool of MCP_TOOLS) {
    const others = MCP_SCOPES.split(' ').filter((s) => s !== tool.scope);
    const token = await obtainToken(ctx, { scope: others.join(' ') });
    const res = await rawMcp(mcpUrl, callTool(tool.name, argsFor(tool.name, tenant.siteId)), { authorization: `Bearer ${token}` });
    const challenge = res.headers.get('www-authenticate') ?? '';
    expectError(t, await toResponseLike(res), 403, 'INSUFFICIENT_SCOPE', tool.name);
    t.match(challenge, 'error="insufficient_scope"', `${tool.name}: insufficient_scope`);
    t.match(challenge, new RegExp(`scope="[^"]*${tool.scope}`), `${tool.name}: the challenge names ${tool.scope}`);
    t.match(challenge, resourceMetadata);
  }
  const readOnly = await obtainToken(ctx, { scope: 'opportunities:read' });
  const client = await connectWithToken(mcpUrl, readOnly);
  t.teardown(() => client.close());
  t.equal((await client.listTools()).tools.length, MCP_TOOLS.length + GRANT_TOOLS.length, 'tools/list shows every tool');
  t.equal(toolAnswer(await client.callTool({ name: 'list_opportunities', arguments: { siteId: tenant.siteId } })).isError, false);
  await t.rejects(client.callTool({ name: 'list_conversations', arguments: { siteId: tenant.siteId } }), { code: 403, message: /INSUFFICIENT_SCOPE/ }, 'the SDK client without an auth provider sees the 403');
});

t.test("every tool enforces the grant's sites: another team's site, a site outside the grant, an unknown site → SITE_NOT_FOUND; an unlicensed site → SITE_NOT_LICENSED", async (t) => {
  const b = await createTenant(ctx.app.services);
  const second = await anotherSite(ctx.app.services, tenant.teamId, 'second.example.test');
  const unlicensed = await anotherSite(ctx.app.services, tenant.teamId, 'unlicensed.example.test');
  await changeSiteSettings(ctx.app.services, { siteId: unlicensed, changes: { licensed: false } });
  await settle(ctx.app.services);
  const token = await obtainToken(ctx, { scope: MCP_SCOPES, siteIds: [tenant.siteId, unlicensed] });
  const client = await connectWithToken(mcpUrl, token);
  t.teardown(() => client.close());
  for (const tool of MCP_TOOLS) {
    for (const [siteId, code, what] of [
      [b.siteId, 'SITE_NOT_FOUND', "another team's site"],
      [second, 'SITE_NOT_FOUND', 'a site of the team outside the grant'],
      ['no-such-site', 'SITE_NOT_FOUND', 'an unknown site'],
      [unlicensed, 'SITE_NOT_LICENSED', 'an unlicensed site'],
    ] as const) {
      const answer = toolAnswer(await client.callTool({ name: tool.name, arguments: argsFor(tool.name, siteId) }));
      t.equal(answer.isError, true, `${tool.name} on ${what}: a tool error`);
      t.equal(answer.body.error?.code, code, `${tool.name} on ${what}: ${code}`);
    }
  }
  const own = toolAnswer(await client.callTool({ name: 'get_conversation', arguments: { siteId: tenant.siteId, conversationId } }));
  t.equal(own.isError, false, 'the granted site works');
});

t.test('bad input is a tool error VALIDATION_ERROR; an unknown conversation NOT_FOUND; an unknown tool a JSON-RPC error; the session goes on', async (t) => {
  const token = await obtainToken(ctx, { scope: MCP_SCOPES });
  const client = await connectWithToken(mcpUrl, token);
  t.teardown(() => client.close());
  const missing = toolAnswer(await client.callTool({ name: 'list_conversations', arguments: {} }));
  t.equal(missing.body.error.code, 'VALIDATION_ERROR');
  t.match(missing.body.error.message, 'siteId');
  const wrong = toolAnswer(await client.callTool({ name: 'list_conversations', arguments: { siteId: tenant.siteId, limit: 500, status: 'nope' } }));
  t.equal(wrong.body.error.code, 'VALIDATION_ERROR');
  t.match(wrong.body.error.message, /limit.*status|status.*limit/);
  const extra = toolAnswer(await client.callTool({ name: 'list_opportunities', arguments: { siteId: tenant.siteId, surprise: 1 } }));
  t.equal(extra.body.error.code, 'VALIDATION_ERROR', 'unknown arguments are refused');
  const blank = toolAnswer(await client.callTool({ name: 'reply_to_conversation', arguments: { siteId: tenant.siteId, conversationId, text: '   ' } }));
  t.equal(blank.body.error.code, 'VALIDATION_ERROR', "the REST body's rules hold");
  const unknown = toolAnswer(await client.callTool({ name: 'get_conversation', arguments: { siteId: tenant.siteId, conversationId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' } }));
  t.equal(unknown.body.error.code, 'NOT_FOUND');
  const badCursor = toolAnswer(await client.callTool({ name: 'list_opportunities', arguments: { siteId: tenant.siteId, cursor: 'nonsense' } }));
  t.equal(badCursor.body.error.code, 'VALIDATION_ERROR');
  await t.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool/);
  // On the wire once "Unknown tool", not "MCP error -32602: Unknown tool" (the SDK client adds that prefix itself), and a long name cut.
  const raw = await rawMcp(ctx.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: `x${'y'.repeat(5_000)}`, arguments: {} } }, { authorization: `Bearer ${token}` });
  const rawError = ((await raw.json()) as { error: { code: number; message: string } }).error;
  t.equal(rawError.code, -32602);
  t.match(rawError.message, /^Unknown tool: xy+…?$/);
  t.ok(rawError.message.length <= 120, `the name is cut (${rawError.message.length} characters)`);
  t.equal(toolAnswer(await client.callTool({ name: 'list_opportunities', arguments: { siteId: tenant.siteId } })).isError, false, 'still answering');
});

t.test('transport: JSON by default, SSE when the Accept header prefers it; GET and DELETE are 405 (stateless)', async (t) => {
  const token = await obtainToken(ctx, { scope: MCP_SCOPES });
  const auth = { authorization: `Bearer ${token}` };
  const json = await rawMcp(mcpUrl, INITIALIZE, auth);
  t.equal(json.status, 200);
  t.match(json.headers.get('content-type'), /^application\/json/);
  t.equal(json.headers.get('mcp-session-id'), null, 'no session');
  t.match(((await json.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name, 'outreach-integration-service');
  const sse = await rawMcp(mcpUrl, callTool('list_opportunities', { siteId: tenant.siteId }), { ...auth, accept: 'text/event-stream, application/json;q=0.9' });
  t.equal(sse.status, 200);
  t.match(sse.headers.get('content-type'), /^text\/event-stream/);
  const text = await sse.text();
  t.match(text, /event: message\ndata: \{.*opportunities/s, 'the result arrives as an SSE message');
  // Not a JSON-RPC message: answered at once with 400 (an empty body reaches the SDK, which answers a parse error).
  const post = (body: string) => fetch(mcpUrl, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body, signal: AbortSignal.timeout(5_000) });
  const empty = await post('');
  t.equal(empty.status, 400, 'an empty body: 400');
  t.match(await empty.json(), { jsonrpc: '2.0', error: { code: -32700 } }, 'a JSON-RPC parse error');
  const garbled = await post('{not json');
  t.equal(garbled.status, 400, 'a body that is not JSON: 400');
  t.match(await garbled.json(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: /^Parse error/ } }, 'a JSON-RPC parse error too');
  const notUtf8 = await fetch(mcpUrl, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff"}}', 'latin1'), signal: AbortSignal.timeout(5_000) });
  t.equal(notUtf8.status, 400, 'bytes that are not UTF-8: 400');
  t.match(await notUtf8.json(), { jsonrpc: '2.0', error: { code: -32700, message: /not valid UTF-8/ } }, 'a JSON-RPC parse error');
  const tooBig = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2_000_000) } }));
  t.equal(tooBig.status, 413, 'a body over the limit: 413, as the SDK answers it');
  t.match(await tooBig.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, message: /^Payload Too Large: the body exceeds the limit of \d+ bytes\.$/ } });
  // Params that do not fit the method: -32602 with a short message, not -32603 with zod's dump.
  for (const [body, pattern] of [
    [{ jsonrpc: '2.0', id: 3, method: 'tools/call' }, /^Invalid params for tools\/call: params: /],
    [{ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 5 } }, /^Invalid params for tools\/call: params\.name: /],
    [{ jsonrpc: '2.0', id: 'five', method: 'initialize' }, /^Invalid params for initialize: params: /],
  ] as const) {
    const res = await rawMcp(mcpUrl, body, auth);
    t.equal(res.status, 200);
    const answer = (await res.json()) as { id: unknown; error: { code: number; message: string } };
    t.match(answer, { jsonrpc: '2.0', id: body.id, error: { code: -32602, message: pattern } }, JSON.stringify(body));
    t.notMatch(answer.error.message, /\n|"expected"/, 'no zod dump');
  }
  const withArray = await rawMcp(mcpUrl, { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'list_opportunities', arguments: [] } }, auth);
  const arrayAnswer = (await withArray.json()) as { error: { code: number; message: string } };
  t.equal(arrayAnswer.error.code, -32602);
  t.notMatch(arrayAnswer.error.message, /\n/, 'one line');
  // Batches: an empty one is one Invalid Request error (JSON-RPC 2.0 §6); from 2025-06-18 on the protocol has none.
  const emptyBatch = await rawMcp(mcpUrl, [], auth);
  t.equal(emptyBatch.status, 400);
  t.match(await emptyBatch.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: /empty/ } });
  const ping = { jsonrpc: '2.0', id: 7, method: 'ping' };
  const newBatch = await rawMcp(mcpUrl, [ping, ping], auth);
  t.equal(newBatch.status, 400);
  t.match(await newBatch.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: /not part of MCP 2025-11-25/ } });
  const oldBatch = await rawMcp(mcpUrl, [ping, { ...ping, id: 8 }], { ...auth, 'mcp-protocol-version': '2025-03-26' });
  t.equal(oldBatch.status, 200, 'a 2025-03-26 client may still send one');
  t.match(await oldBatch.json(), [{ id: 7, result: {} }, { id: 8, result: {} }]);
  // JSON that is no JSON-RPC message: -32600 Invalid Request (the SDK said -32700 Parse error, which is for JSON that does not parse).
  for (const body of [{ foo: 1 }, { jsonrpc: '1.0', id: 1, method: 'ping' }, 'hello', { jsonrpc: '2.0', id: {}, method: 'ping' }, { jsonrpc: '2.0', id: 1.5, method: 'ping' }, { jsonrpc: '2.0', id: 1, method: 5 }, [1, 2], [ping, { foo: 1 }]]) {
    const res = await rawMcp(mcpUrl, body, { ...auth, 'mcp-protocol-version': '2025-03-26' });
    t.equal(res.status, 400, JSON.stringify(body));
    t.match(await res.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: /^Invalid Request/ } }, `${JSON.stringify(body)}: Invalid Request`);
  }
  const initializeInBatch = await rawMcp(mcpUrl, [INITIALIZE], { ...auth, 'mcp-protocol-version': '2025-03-26' });
  t.equal(initializeInBatch.status, 400);
  t.match(await initializeInBatch.json(), { error: { code: -32600, message: /initialize must not be part of a batch/ } });
  // Two requests sharing an id: the answers could not be told apart (the SDK's transport answered one of them).
  const sameId = await rawMcp(mcpUrl, [ping, { ...ping, method: 'tools/list' }], { ...auth, 'mcp-protocol-version': '2025-03-26' });
  t.equal(sameId.status, 400);
  t.match(await sameId.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: /two requests of the batch have the id 7/ } });
  const sameIdAsNotification = await rawMcp(mcpUrl, [ping, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...ping, id: '7' }], {
    ...auth,
    'mcp-protocol-version': '2025-03-26',
  });
  t.equal(sameIdAsNotification.status, 200, 'a notification has no id, and "7" is not 7');
  t.match(await sameIdAsNotification.json(), [{ id: 7, result: {} }, { id: '7', result: {} }]);
  // A body that is not JSON at all: 415 as a JSON-RPC error, whether it has no Content-Type or another one.
  for (const headers of [{}, { 'content-type': 'text/plain' }] as Record<string, string>[]) {
    const res = await fetch(mcpUrl, { method: 'POST', headers: { ...auth, accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(ping) });
    t.equal(res.status, 415, JSON.stringify(headers));
    t.match(await res.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, message: /Content-Type must be application\/json/ } });
  }
  for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
    const res = await fetch(mcpUrl, { method, headers: { ...auth, accept: 'text/event-stream' } });
    t.equal(res.status, 405, method);
    t.equal(res.headers.get('allow'), 'POST, OPTIONS', `${method}: names what is allowed`);
  }
  // Whatever body comes with it: the method is what is wrong.
  for (const [headers, body] of [
    [{ 'content-type': 'text/plain' }, 'x'],
    [{ 'content-type': 'application/json' }, '{not json'],
    [{ 'content-type': 'application/json' }, JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) })],
  ] as const) {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const res = await fetch(mcpUrl, { method, headers: { ...auth, ...headers }, body });
      t.equal(res.status, 405, `${method} with ${headers['content-type']}, ${body.length} bytes`);
      t.match(await res.json(), { error: { code: -32000, message: 'Method not allowed.' } });
    }
  }
  // Browser-based clients (MCP Inspector) need CORS on /mcp and on the token endpoint, and must see the challenge.
  const preflight = (url: string) =>
    fetch(url, { method: 'OPTIONS', headers: { origin: 'http://localhost:6274', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' } });
  for (const url of [mcpUrl, `${base}/oauth/token`]) {
    const pre = await preflight(url);
    t.equal(pre.status, 204, `preflight ${url}`);
    t.equal(pre.headers.get('access-control-allow-origin'), '*');
    t.match(pre.headers.get('access-control-allow-headers'), 'authorization');
  }
  // The SDK's discovery fetch of the protected-resource metadata carries MCP-Protocol-Version: preflighted.
  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    const pre = await fetch(`${base}${path}`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:6274', 'access-control-request-method': 'GET', 'access-control-request-headers': 'mcp-protocol-version' },
    });
    t.equal(pre.status, 204, `preflight ${path}`);
    t.equal(pre.headers.get('access-control-allow-origin'), '*');
    t.match(pre.headers.get('access-control-allow-headers'), 'mcp-protocol-version');
  }
  // Arguments that are not an object: JSON-RPC's invalid params (-32602), not an internal error.
  for (const args of [null, 'a string', [1, 2]]) {
    const res = await rawMcp(mcpUrl, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_agents', arguments: args } }, auth);
    t.match(await res.json(), { jsonrpc: '2.0', id: 7, error: { code: -32602 } }, `arguments ${JSON.stringify(args)}`);
  }
  const unauthenticated = await rawMcp(mcpUrl, INITIALIZE, { origin: 'http://localhost:6274' });
  t.match(unauthenticated.headers.get('access-control-expose-headers'), 'www-authenticate', 'the 401 challenge is readable cross-origin');
  const sdk = new Client({ name: 'sse', version: '1' });
  await sdk.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: auth } }));
  t.equal((await sdk.listTools()).tools.length, MCP_TOOLS.length + GRANT_TOOLS.length, 'the SDK client connects (its GET stream is optional)');
  await sdk.close();
});

t.test('write tools count in the team\'s write rate tier, with the REST writes', async (t) => {
  // Four writes a minute: the ingestion, an MCP write, a REST write, an MCP write with bad arguments.
  const limited = await startMcpApp({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '4' } });
  t.teardown(() => limited.app.close());
  const id = ((await ingest(limited.app.fastify, limited.tenant, PITCH)).json() as { conversationIds: string[] }).conversationIds[0]!;
  const token = await obtainToken(limited, { scope: MCP_SCOPES });
  const client = await connectWithToken(limited.mcpUrl, token);
  t.teardown(() => client.close());
  const read = () => client.callTool({ name: 'mark_conversation_read', arguments: { siteId: limited.tenant.siteId, conversationId: id } });
  t.equal(toolAnswer(await read()).isError, false, 'MCP write 1');
  const elsewhere = toolAnswer(await client.callTool({ name: 'mark_conversation_read', arguments: { siteId: '01ARZ3NDEKTSV4RRFFQ69G5FAV', conversationId: id } }));
  t.equal(elsewhere.body.error?.code, 'SITE_NOT_FOUND', 'a write on a site the grant does not reach is refused, and not counted (as REST, where the site is checked first)');
  const rest = await fetch(`${limited.base}/api/v1/sites/${limited.tenant.siteId}/outreach/conversations/${id}/unread`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  t.equal(rest.status, 200, 'a REST write in between');
  const bad = toolAnswer(await client.callTool({ name: 'mark_conversation_read', arguments: { siteId: limited.tenant.siteId, conversationId: 42 } }));
  t.equal(bad.body.error?.code, 'VALIDATION_ERROR', 'a write with bad arguments is refused…');
  const answers = [toolAnswer(await read())];
  t.equal(answers.at(-1)!.body.error?.code, 'RATE_LIMITED', '…and counted, as a REST write with a bad body is: the next is over the tier, RATE_LIMITED as a tool error');
  t.ok(answers.at(-1)!.body.error.retryAfterSeconds >= 1, 'with the seconds REST sends as Retry-After');
  t.equal(toolAnswer(await client.callTool({ name: 'list_opportunities', arguments: { siteId: limited.tenant.siteId } })).isError, false, 'reads are not limited');
});

// Last: moves the clock.
t.test('an expired token is 401 with the challenge', async (t) => {
  const token = await obtainToken(ctx, { scope: MCP_SCOPES });
  t.equal((await rawMcp(mcpUrl, INITIALIZE, { authorization: `Bearer ${token}` })).status, 200);
  clock.advance(3601_000);
  const res = await rawMcp(mcpUrl, INITIALIZE, { authorization: `Bearer ${token}` });
  t.equal(res.status, 401);
  t.match(res.headers.get('www-authenticate'), /error="invalid_token".*resource_metadata=/);
});
