import t from 'tap';
import type { RecordedEvent } from '../../src/ports/eventStore.ts';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { ingest, PITCH } from '../ingestion/helpers.ts';
import { bearer } from '../helpers/testApp.ts';
import { Browser, PASSWORD, authorizeUrl, formFields, pkce, registerClient, tokenRequest } from '../oauth/helpers.ts';
import { inviteUser } from '../../src/commands/teamInvitations.ts';
import { REDIRECT_URI, callTool, connectWithToken, obtainToken, rawMcp, startMcpApp } from '../mcp/helpers.ts';

/**
 * An auditor replaying the log sees who did what: every event a request's command appends names its
 * actor in the metadata (`actor`, `actorKind`): the API key, the OAuth access token (REST and MCP),
 * or the signed-in dashboard user. (The CLI's operator: `test/cli/eventsAndProjections.test.ts`.)
 */
const ctx = await startMcpApp();
const { app, tenant, browser, base } = ctx;
t.teardown(() => app.close());
const site = `/api/v1/sites/${tenant.siteId}`;
const rest = (method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object, key = tenant.key) =>
  app.fastify.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });

/** The events appended while `work` ran, of the given types, by the request's command (background workers' own events left out). */
async function appendedBy(work: () => Promise<void>, types: string[]): Promise<RecordedEvent[]> {
  const from = await app.services.events.headPosition();
  await work();
  return (await app.services.events.readAll({ after: from, limit: 10_000 })).filter((e) => types.includes(e.type));
}

t.test('an API key: webhooks, suppressions, agent settings, articles, ingestion and conversation actions name it', async (t) => {
  const types = ['SubscriptionCreated', 'SubscriptionUpdated', 'SubscriptionSecretRotated', 'SubscriptionDeleted', 'ContactSuppressed', 'ContactUnsuppressed', 'AgentConfigured', 'ArticleUpserted', 'ArticleDeleted', 'ConversationOpened', 'MessageIngested', 'IngestionRecorded', 'ConversationStatusChanged', 'ConversationTakenOver'];
  const events = await appendedBy(async () => {
    const created = await rest('POST', `${site}/outreach/webhooks`, { label: 'x', url: 'https://example.com/h', eventTypes: ['outreach.reply_sent'] });
    const sub = created.json().subscription.id as string;
    for (const r of [
      await rest('PATCH', `${site}/outreach/webhooks/${sub}`, { label: 'y' }),
      await rest('POST', `${site}/outreach/webhooks/${sub}/rotate-secret`, { graceSeconds: 0 }),
      await rest('DELETE', `${site}/outreach/webhooks/${sub}`),
      await rest('POST', `${site}/outreach/suppressions`, { email: 'a@b.io' }),
      await rest('DELETE', `${site}/outreach/suppressions/a@b.io`),
      await rest('PUT', `${site}/agents/article_boost`, { isActive: true }),
    ]) {
      if (r.statusCode >= 300) throw new Error(`${r.statusCode} ${r.body}`);
    }
    const conversationId = (await ingest(app.fastify, tenant, PITCH)).json().conversationIds[0] as string;
    const status = await rest('POST', `${site}/outreach/conversations/${conversationId}/status`, { status: 'resolved' });
    const takeover = await rest('POST', `${site}/outreach/conversations/${conversationId}/takeover`);
    if (status.statusCode !== 200 || takeover.statusCode !== 200) throw new Error(`${status.body} ${takeover.body}`);
    const article = await rest('PUT', `${site}/articles`, { url: 'https://example.test/a', title: 'A', text: 'x' });
    const deleted = await rest('DELETE', `${site}/articles/${article.json().article.id}`);
    if (deleted.statusCode >= 300) throw new Error(`${deleted.statusCode} ${deleted.body}`);
  }, types);
  t.same([...new Set(events.map((e) => e.type))].sort(), [...types].sort(), 'each kind of event was appended');
  for (const e of events) t.match(e.metadata, { actor: tenant.keyId, actorKind: 'api_key' }, `${e.type} names the key`);
});

t.test('an OAuth access token over MCP names the token', async (t) => {
  const token = await obtainToken(ctx, { scope: 'inbox:read inbox:write' });
  const client = await connectWithToken(`${base}/mcp`, token);
  t.teardown(() => client.close());
  const conversationId = (await ingest(app.fastify, tenant, { ...PITCH, messageId: '<mcp-actor@prospect.io>' })).json().conversationIds[0] as string;
  const events = await appendedBy(async () => {
    const answer = await client.callTool({ name: 'change_conversation_status', arguments: { siteId: tenant.siteId, conversationId, status: 'declined' } });
    if (answer.isError) throw new Error(JSON.stringify(answer));
  }, ['ConversationStatusChanged']);
  t.equal(events.length, 1);
  t.match(events[0]!.metadata, { actor: /^[0-9A-Z]{26}$/, actorKind: 'oauth_access_token' }, 'the access token, by its id');
});

t.test('the dashboard names the signed-in user', async (t) => {
  const events = await appendedBy(async () => {
    const page = (await browser.request('/dashboard/webhooks')).text;
    const action = `/dashboard/sites/${tenant.siteId}/webhooks`;
    const created = await browser.request(action, { form: { ...formFields(page, action), label: 'crm', url: 'https://example.com/d', event_types: 'outreach.reply_sent' } });
    if (created.status !== 201) throw new Error(`${created.status} ${created.text.slice(0, 300)}`);
  }, ['SubscriptionCreated']);
  t.equal(events.length, 1);
  t.match(events[0]!.metadata, { actor: tenant.ownerUserId, actorKind: 'dashboard_user' });
});

t.test('an Advanced site: a prospect import and an on-demand agent run name the key; use marks name no one', async (t) => {
  await changeSiteSettings(app.services, { siteId: tenant.siteId, changes: { plan: 'advanced' } });
  await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000);
  const events = await appendedBy(async () => {
    const imported = await rest('POST', `${site}/agents/outreach/prospects`, { prospects: [{ url: 'https://prospect.example' }] });
    const active = await rest('PUT', `${site}/agents/article_boost`, { isActive: true });
    const run = await rest('POST', `${site}/agents/article_boost/run`);
    if (imported.statusCode !== 201 || active.statusCode !== 200 || run.statusCode !== 202) throw new Error(`${imported.body} ${active.body} ${run.body}`);
  }, ['ProspectsImported', 'AgentRunQueued', 'ApiKeyUsed', 'AgentRunLedgerClosed']);
  const own = new Set(['ApiKeyUsed', 'AgentRunLedgerClosed']);
  for (const e of events.filter((x) => !own.has(x.type))) t.match(e.metadata, { actor: tenant.keyId, actorKind: 'api_key' }, `${e.type} names the key`);
  t.same(events.map((e) => e.type).filter((x) => !own.has(x)).sort(), ['AgentRunQueued', 'ProspectsImported']);
  t.ok(events.some((e) => e.type === 'AgentRunLedgerClosed'), "the run closed the last hour's ledger");
  // The use mark, and the close of the last hour's ledger that whichever request came first did: the service's own.
  for (const e of events.filter((x) => own.has(x.type))) {
    t.notOk('actor' in e.metadata, `${e.type} is the service's own: no actor`);
    t.notOk('requestId' in e.metadata, `${e.type}: and no request's id (which request came first is chance)`);
  }
});

t.test('the dashboard: an API key and an OAuth app created there name the user', async (t) => {
  const events = await appendedBy(async () => {
    const keys = (await browser.request('/dashboard/api-keys')).text;
    const key = await browser.request('/dashboard/api-keys', { form: { ...formFields(keys, '/dashboard/api-keys'), name: 'reporting', scopes: ['inbox:read'], site_id: '' } });
    const apps = (await browser.request('/dashboard/oauth-apps')).text;
    const registered = await browser.request('/dashboard/oauth-apps', { form: { ...formFields(apps, '/dashboard/oauth-apps'), name: 'crm', redirect_uris: 'https://crm.example.com/cb', token_endpoint_auth_method: 'none' } });
    if (key.status !== 201 || registered.status !== 201) throw new Error(`${key.status} ${registered.status}`);
  }, ['ApiKeyCreated', 'OAuthClientRegistered']);
  t.same(events.map((e) => e.type).sort(), ['ApiKeyCreated', 'OAuthClientRegistered']);
  for (const e of events) t.match(e.metadata, { actor: tenant.ownerUserId, actorKind: 'dashboard_user' }, `${e.type} names the user`);
});

t.test('a person joining with an invitation names themselves; a sign-out names the user', async (t) => {
  const { code } = await inviteUser(app.services, { teamId: tenant.teamId, email: 'joiner@example.test', role: 'member' });
  await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000);
  const person = new Browser(base);
  const joined = await appendedBy(async () => {
    const form = formFields((await person.request('/dashboard/join')).text, '/dashboard/join');
    const answer = await person.request('/dashboard/join', { form: { csrf: form.csrf!, code, new_password: 'their own passphrase', confirm_password: 'their own passphrase' } });
    if (answer.status !== 303) throw new Error(`${answer.status} ${answer.text.slice(0, 300)}`);
  }, ['UserEmailClaimed', 'InvitationAccepted', 'UserAdded']);
  t.same(joined.map((e) => e.type), ['UserEmailClaimed', 'InvitationAccepted', 'UserAdded']);
  const userId = (joined.at(-1)!.data as { userId: string }).userId;
  for (const e of joined) t.match(e.metadata, { actor: userId, actorKind: 'dashboard_user', requestId: /^[0-9a-f-]{36}$/ }, `${e.type} names the person joining, in the join's request`);

  const ended = await appendedBy(async () => {
    const page = (await person.request('/dashboard/team')).text;
    const out = await person.request('/dashboard/sign-out', { form: formFields(page, '/dashboard/sign-out') });
    if (out.status !== 303) throw new Error(`${out.status}`);
  }, ['DashboardSessionEnded']);
  t.equal(ended.length, 1);
  t.match(ended[0]!.metadata, { actor: userId, actorKind: 'dashboard_user' }, 'the sign-out names the user');
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test("a request's events carry its id (the answer's X-Request-Id), the service's own, never the client's", async (t) => {
  const rest2 = (method: 'POST' | 'DELETE', url: string, payload?: object) =>
    app.fastify.inject({ method, url, headers: { ...bearer(tenant.key), 'x-request-id': 'chosen-by-the-client' }, ...(payload ? { payload } : {}) });
  let created!: Awaited<ReturnType<typeof rest2>>;
  let deleted!: Awaited<ReturnType<typeof rest2>>;
  const events = await appendedBy(async () => {
    created = await rest2('POST', `${site}/outreach/webhooks`, { label: 'x', url: 'https://example.com/h', eventTypes: ['outreach.reply_sent'] });
    deleted = await rest2('DELETE', `${site}/outreach/webhooks/${created.json().subscription.id}`);
  }, ['SubscriptionCreated', 'SubscriptionDeleted']);
  const [one, two] = [created.headers['x-request-id'], deleted.headers['x-request-id']];
  t.match(one, UUID, 'a new UUID, not the id the client sent');
  t.match(two, UUID);
  t.not(one, two, 'each request its own');
  t.same(events.map((e) => [e.type, e.metadata['requestId']]), [['SubscriptionCreated', one], ['SubscriptionDeleted', two]]);
  t.match((await app.fastify.inject({ url: '/api/v1/no-such-route' })).headers['x-request-id'], UUID, 'a 404 carries one too');
  t.match((await rest2('POST', `${site}/outreach/webhooks`, { label: 'x' })).headers['x-request-id'], UUID, 'and a refusal');

  // An ingestion's events: each with the ingestion's id and the request's.
  const ingested = await appendedBy(async () => void (await ingest(app.fastify, tenant, { ...PITCH, messageId: '<request-id@prospect.io>' })), ['MessageIngested', 'IngestionRecorded']);
  t.ok(ingested.length >= 2);
  t.equal(new Set(ingested.map((e) => e.metadata['requestId'])).size, 1, 'one request id across the ingestion');
  t.match(ingested[0]!.metadata['requestId'], UUID);

  // MCP: the POST that carried the call.
  const token = await obtainToken(ctx, { scope: 'inbox:read inbox:write' });
  const conversationId = (await ingest(app.fastify, tenant, { ...PITCH, messageId: '<mcp-request-id@prospect.io>' })).json().conversationIds[0] as string;
  let answer!: Response;
  const viaMcp = await appendedBy(async () => {
    answer = await rawMcp(`${base}/mcp`, callTool('change_conversation_status', { siteId: tenant.siteId, conversationId, status: 'declined' }), { authorization: `Bearer ${token}` });
    await answer.text();
  }, ['ConversationStatusChanged']);
  t.equal(viaMcp.length, 1);
  t.match(answer.headers.get('x-request-id'), UUID);
  t.equal(viaMcp[0]!.metadata['requestId'], answer.headers.get('x-request-id'), "the MCP POST's id");
});

t.test('events appended for no actor yet (a sign-in, a consent, a token grant, a refresh, a revocation) carry their request id too', async (t) => {
  const chosen = { 'x-request-id': 'chosen-by-the-client' };
  let signIn!: Awaited<ReturnType<Browser['request']>>;
  const signedIn = await appendedBy(async () => {
    const browser = new Browser(base);
    const form = await browser.request('/dashboard/sign-in');
    signIn = await browser.request('/dashboard/sign-in', { form: { ...formFields(form.text, '/dashboard/sign-in'), email: ctx.ownerEmail, password: PASSWORD }, headers: chosen });
    if (signIn.status !== 303) throw new Error(`sign-in: ${signIn.status}`);
  }, ['DashboardSessionStarted']);
  t.equal(signedIn.length, 1);
  t.match(signIn.headers.get('x-request-id'), UUID);
  t.equal(signedIn[0]!.metadata['requestId'], signIn.headers.get('x-request-id'), "the sign-in POST's id, not the client's");
  t.notOk('actor' in signedIn[0]!.metadata, 'and no actor: the person is named in the data');

  const client = await registerClient(app, tenant, 'none', [REDIRECT_URI]);
  const { verifier, challenge } = pkce();
  let consent!: Awaited<ReturnType<Browser['request']>>;
  const consented = await appendedBy(async () => {
    consent = await browser.consent(authorizeUrl(base, { client_id: client.clientId, scope: 'inbox:read', code_challenge: challenge, redirect_uri: REDIRECT_URI }), 'approve', [tenant.siteId]);
  }, ['ConsentGiven', 'AuthorizationCodeIssued']);
  t.equal(consented.length, 2);
  for (const e of consented) t.equal(e.metadata['requestId'], consent.headers.get('x-request-id'), `${e.type}: the consent form's POST`);

  const code = new URL(consent.location!).searchParams.get('code')!;
  const token = async (body: Record<string, string>, types: string[]) => {
    let answer!: Awaited<ReturnType<typeof tokenRequest>>;
    const events = await appendedBy(async () => {
      answer = await tokenRequest(base, body, chosen);
      if (answer.status !== 200) throw new Error(JSON.stringify(answer.json));
    }, types);
    t.ok(events.length > 0, types.join(', '));
    for (const e of events) t.equal(e.metadata['requestId'], answer.headers.get('x-request-id'), `${e.type}: the token request's id, not the client's`);
    return answer.json;
  };
  const issued = await token({ grant_type: 'authorization_code', client_id: client.clientId, code, redirect_uri: REDIRECT_URI, code_verifier: verifier }, ['AuthorizationCodeRedeemed', 'AccessTokenIssued', 'RefreshTokenIssued']);
  const refreshed = await token({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: issued['refresh_token'] as string }, ['RefreshTokenRotated', 'AccessTokenIssued']);

  let revoke!: Response;
  const revoked = await appendedBy(async () => {
    revoke = await fetch(`${base}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...chosen },
      body: new URLSearchParams({ client_id: client.clientId, token: refreshed['refresh_token'] as string }).toString(),
    });
    if (revoke.status !== 200) throw new Error(`revoke: ${revoke.status}`);
  }, ['TokenRevoked', 'GrantRevoked']);
  t.ok(revoked.length > 0);
  for (const e of revoked) t.equal(e.metadata['requestId'], revoke.headers.get('x-request-id'), `${e.type}: the revocation's id`);
});
