import t from 'tap';
import { idempotencyScope } from '../../src/http/routes/ingestion.ts';
import { Browser, obtainCode, registerClient, startOAuthApp, tokenRequest } from '../oauth/helpers.ts';
import { PITCH, inboxUrl } from './helpers.ts';

/**
 * An OAuth access token lives about an hour and is replaced on refresh; the Idempotency-Key is
 * scoped to the OAuth client acting for the team, so a retry after a refresh replays the ingestion.
 */
t.test('OAuth: the same Idempotency-Key after a token refresh replays; another client does not collide', async (t) => {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const browser = new Browser(issuer);
  t.equal((await browser.signIn(ownerEmail)).status, 303, 'signed in');

  const tokensFor = async () => {
    const client = await registerClient(app, tenant, 'none');
    const code = await obtainCode(browser, issuer, client, [tenant.siteId], { scope: 'inbox:write' });
    const res = await tokenRequest(issuer, { grant_type: 'authorization_code', client_id: client.clientId, code: code.code, redirect_uri: code.redirectUri, code_verifier: code.verifier });
    t.equal(res.status, 200, 'tokens issued');
    return { client, access: res.json.access_token as string, refresh: res.json.refresh_token as string };
  };
  const post = (token: string, key: string) =>
    fetch(`${issuer}${inboxUrl(tenant.siteId)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ ...PITCH, runExtraction: false }),
    }).then(async (r) => ({ status: r.status, body: await r.text() }));

  const a = await tokensFor();
  const first = await post(a.access, 'order-1');
  t.equal(first.status, 201, 'first request ingests');

  const refreshed = await tokenRequest(issuer, { grant_type: 'refresh_token', client_id: a.client.clientId, refresh_token: a.refresh });
  t.equal(refreshed.status, 200, 'token refreshed');
  const newAccess = refreshed.json.access_token as string;
  t.not(newAccess, a.access, 'a new access token');
  const retry = await post(newAccess, 'order-1');
  t.equal(retry.status, 200, 'the retry with the refreshed token replays');
  t.equal(retry.body, first.body, 'with the identical body');

  const b = await tokensFor();
  const other = await post(b.access, 'order-1');
  t.equal(other.status, 201, 'another OAuth client has its own keys');
  t.not(other.body, first.body);
});

t.test('idempotencyScope: API keys by id, OAuth tokens by client and team', async (t) => {
  t.equal(idempotencyScope({ kind: 'api_key', id: 'k1', teamId: 'T', oauthClientId: null }), 'api_key:k1');
  const token = (id: string) => ({ kind: 'oauth_access_token', id, teamId: 'T', oauthClientId: 'svc_c' });
  t.equal(idempotencyScope(token('tok1')), idempotencyScope(token('tok2')), 'two tokens of one client and team share a scope');
  t.not(idempotencyScope(token('tok1')), idempotencyScope({ ...token('tok1'), teamId: 'U' }), 'another team does not');
});
