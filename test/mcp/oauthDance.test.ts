import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ingest, PITCH } from '../ingestion/helpers.ts';
import { Browser, addTeamUser, tokenRequest } from '../oauth/helpers.ts';
import { HeadlessProvider, INITIALIZE, obtainToken, clientDocument, connectWithOAuth, rawMcp, startDocumentServer, startMcpApp, toolAnswer } from './helpers.ts';

const MCP_SCOPES = 'inbox:read inbox:write opportunities:read agents:read agents:write articles:write';

t.test('a stock SDK client knowing only the URL: 401 → protected-resource metadata → client metadata document → consent → token → tools', async (t) => {
  const ctx = await startMcpApp();
  t.teardown(() => ctx.app.close());
  const docs = await startDocumentServer();
  t.teardown(() => docs.close());
  const clientId = docs.serve('/mcp/client.json', (origin) => ({ body: clientDocument(`${origin}/mcp/client.json`), headers: { 'cache-control': 'max-age=600' } }));
  const pitched = await ingest(ctx.app.fastify, ctx.tenant, PITCH);
  t.equal(pitched.statusCode, 201, 'a pitch in the inbox');

  const provider = new HeadlessProvider(ctx.browser, [ctx.tenant.siteId], { clientMetadataUrl: clientId });
  const client = await connectWithOAuth(ctx.mcpUrl, provider);
  t.teardown(() => client.close());

  t.equal(provider.authorizations.length, 1, 'one trip to the consent screen');
  const asked = provider.authorizations[0]!;
  t.equal(asked.url.origin + asked.url.pathname, `${ctx.base}/oauth/authorize`, 'the authorization endpoint from the discovered metadata');
  t.equal(asked.url.searchParams.get('client_id'), clientId, 'the metadata document URL is the client_id');
  t.equal(asked.url.searchParams.get('resource'), `${ctx.base}/mcp`, 'RFC 8707 resource from the protected-resource metadata');
  t.equal(asked.url.searchParams.get('scope'), MCP_SCOPES, 'the scopes the 401 named');
  t.equal(asked.url.searchParams.get('code_challenge_method'), 'S256');
  t.match(asked.consentPage, 'Desktop Assistant', "the consent screen shows the document's client_name");
  t.match(asked.consentPage, new URL(docs.origin).host, "and the document's host");
  t.match(asked.location, /^http:\/\/127\.0\.0\.1:53682\/callback\?code=/, 'the code went to the registered loopback redirect');

  const token = provider.saved?.access_token ?? '';
  t.match(token, /^svc_oauth_/, 'an access token');
  t.equal(provider.saved?.scope, MCP_SCOPES);
  t.equal(docs.fetches.get('/mcp/client.json'), 1, 'the document was fetched once (authorize, consent and token used the cache)');

  const { tools } = await client.listTools();
  t.same(
    tools.map((tool) => tool.name).sort(),
    [
      'change_conversation_status',
      'get_conversation',
      'get_opportunity',
      'hand_back_conversation',
      'list_agent_runs',
      'list_agents',
      'list_conversations',
      'list_opportunities',
      'list_sites',
      'mark_conversation_read',
      'mark_conversation_unread',
      'reply_to_conversation',
      'run_agent',
      'sync_article',
      'take_over_conversation',
      'update_agent',
    ],
  );
  const listOpportunities = tools.find((tool) => tool.name === 'list_opportunities')!;
  t.same(listOpportunities.inputSchema.required, ['siteId'], 'siteId is required');
  t.match(listOpportunities.description, /opportunities:read/, 'the description names the scope');

  const answer = toolAnswer(await client.callTool({ name: 'list_opportunities', arguments: { siteId: ctx.tenant.siteId } }));
  t.equal(answer.isError, false);
  t.equal(answer.body.opportunities.length, 1, "the pitch's opportunity");
  const rest = await fetch(`${ctx.base}/api/v1/sites/${ctx.tenant.siteId}/outreach/opportunities`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(rest.status, 200, 'the same token works on the REST API');
  t.same(answer.body, await rest.json(), 'the tool answers what the REST route answers');

  // A refresh by the metadata-document client keeps the token bound to the MCP resource.
  const refreshed = await tokenRequest(ctx.base, { grant_type: 'refresh_token', client_id: clientId, refresh_token: provider.saved!.refresh_token! });
  t.equal(refreshed.status, 200, 'refresh with the URL client_id');
  const again = await rawMcp(ctx.mcpUrl, INITIALIZE, { authorization: `Bearer ${refreshed.json.access_token}` });
  t.equal(again.status, 200, 'the refreshed token is good for /mcp');

  // Only owners and admins consent, for this client as for any.
  const memberEmail = await addTeamUser(ctx.app, ctx.tenant.teamId, 'member');
  const member = new Browser(ctx.base);
  await member.signIn(memberEmail);
  const refused = await member.request(asked.url.toString());
  t.equal(refused.status, 403, 'a member cannot approve');
  t.match(refused.text, 'Only team owners and admins can authorize apps');
});

t.test('dynamic registration (RFC 7591), when the operator enables it: a client without a metadata document registers itself', async (t) => {
  const ctx = await startMcpApp({ env: { OAUTH_DYNAMIC_REGISTRATION: 'true', OAUTH_DYNAMIC_REGISTRATION_PER_HOUR: '4' } });
  t.teardown(() => ctx.app.close());
  const metadata = (await (await fetch(`${ctx.base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
  t.equal(metadata.registration_endpoint, `${ctx.base}/oauth/register`);

  const provider = new HeadlessProvider(ctx.browser, [ctx.tenant.siteId]);
  const client = await connectWithOAuth(ctx.mcpUrl, provider);
  t.teardown(() => client.close());
  t.match(provider.info?.client_id, /^svc_[0-9a-f]{24}$/, 'a client id issued by the service');
  t.match(provider.authorizations[0]!.consentPage, 'registered itself; its name is not verified', 'the consent screen says so');
  const answer = toolAnswer(await client.callTool({ name: 'list_conversations', arguments: { siteId: ctx.tenant.siteId } }));
  t.equal(answer.isError, false);
  t.same(answer.body.conversations, []);

  const register = (body: unknown) => fetch(`${ctx.base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const confidential = await register({ redirect_uris: ['https://app.example.test/cb'], token_endpoint_auth_method: 'client_secret_basic' });
  t.equal(confidential.status, 400, 'confidential clients cannot register themselves');
  t.equal(((await confidential.json()) as { error: string }).error, 'invalid_client_metadata');
  const badUri = await register({ redirect_uris: ['http://evil.example/cb'] });
  t.equal(badUri.status, 400);
  t.equal(((await badUri.json()) as { error: string }).error, 'invalid_redirect_uri');
  // The consent page shows the name: an override that makes "\u202EelgooG" read "Google" is refused.
  const spoofing = await register({ client_name: '\u202EelgooG', redirect_uris: ['https://app.example.test/cb'] });
  t.equal(spoofing.status, 400, 'a name with a bidirectional override is refused');
  t.match(await spoofing.json(), { error: 'invalid_client_metadata', error_description: /client_name must be one line of text/ });
  // The SDK client registered once; three refusals above counted too: the 5th registration this hour from this address is refused.
  const limited = await register({ redirect_uris: ['https://app.example.test/cb'] });
  t.equal(limited.status, 429, 'rate-limited per address');
  t.ok(Number(limited.headers.get('retry-after')) > 0, 'Retry-After');
});

t.test('dynamic registration: a metadata member sent as null is refused, not taken as left out (RFC 7591 §2)', async (t) => {
  const ctx = await startMcpApp({ env: { OAUTH_DYNAMIC_REGISTRATION: 'true', OAUTH_DYNAMIC_REGISTRATION_PER_HOUR: '100' } });
  t.teardown(() => ctx.app.close());
  const register = (body: unknown) => fetch(`${ctx.base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  for (const member of ['token_endpoint_auth_method', 'grant_types', 'response_types', 'client_name', 'client_uri']) {
    const res = await register({ redirect_uris: ['https://app.example.test/cb'], [member]: null });
    t.equal(res.status, 400, `${member}: null`);
    t.equal(((await res.json()) as { error: string }).error, 'invalid_client_metadata');
  }
  const plain = await register({ redirect_uris: ['https://app.example.test/cb'] });
  t.equal(plain.status, 201, 'left out: the defaults');
  t.equal(((await plain.json()) as { token_endpoint_auth_method: string }).token_endpoint_auth_method, 'none');
});

t.test('dynamic registration is off by default', async (t) => {
  const ctx = await startMcpApp();
  t.teardown(() => ctx.app.close());
  const metadata = (await (await fetch(`${ctx.base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
  t.notOk('registration_endpoint' in metadata, 'no registration_endpoint in the metadata');
  t.equal(metadata.client_id_metadata_document_supported, true);
  t.same(metadata.code_challenge_methods_supported, ['S256']);
  t.ok((metadata.token_endpoint_auth_methods_supported as string[]).includes('none'));
  const res = await fetch(`${ctx.base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['https://app.example.test/cb'] }) });
  t.equal(res.status, 404, '/oauth/register does not exist');

  const provider = new HeadlessProvider(ctx.browser, [ctx.tenant.siteId]);
  await t.rejects(connectWithOAuth(ctx.mcpUrl, provider), /dynamic client registration/i, 'a client with neither a metadata document nor registration cannot connect');
  t.equal(provider.authorizations.length, 0);
});

t.test('step-up (403 insufficient_scope): the SDK client asks the user again for the missing scope, then the call goes through', async (t) => {
  const ctx = await startMcpApp();
  t.teardown(() => ctx.app.close());
  const docs = await startDocumentServer();
  t.teardown(() => docs.close());
  const clientId = docs.serve('/step-up/client.json', (origin) => ({ body: clientDocument(`${origin}/step-up/client.json`) }));
  // A client holding a token for opportunities:read only (and no refresh token, so the SDK re-authorizes rather than refreshes).
  const narrow = await obtainToken(ctx, { scope: 'opportunities:read', clientId });
  const provider = new HeadlessProvider(ctx.browser, [ctx.tenant.siteId], { clientMetadataUrl: clientId });
  provider.saveClientInformation({ client_id: clientId });
  provider.saveTokens({ access_token: narrow, token_type: 'Bearer' });
  const transport = new StreamableHTTPClientTransport(new URL(ctx.mcpUrl), { authProvider: provider });
  const client = new Client({ name: 'step-up', version: '1' });
  await client.connect(transport);
  t.teardown(() => client.close());
  t.equal(toolAnswer(await client.callTool({ name: 'list_opportunities', arguments: { siteId: ctx.tenant.siteId } })).isError, false, 'the granted scope works');

  await t.rejects(client.callTool({ name: 'list_conversations', arguments: { siteId: ctx.tenant.siteId } }), { message: /Unauthorized/ }, 'the 403 sends the user to consent (the SDK throws Unauthorized until finishAuth)');
  t.equal(provider.authorizations.length, 1);
  t.equal(provider.authorizations[0]!.url.searchParams.get('scope'), 'opportunities:read inbox:read', 'the scope the challenge named: what the token had plus what the call needs');
  await transport.finishAuth(provider.code!);
  t.equal(provider.saved?.scope, 'opportunities:read inbox:read');
  const answer = toolAnswer(await client.callTool({ name: 'list_conversations', arguments: { siteId: ctx.tenant.siteId } }));
  t.equal(answer.isError, false, 'the call goes through with the new token');
});
