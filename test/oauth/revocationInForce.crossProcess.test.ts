import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { webhooksPath } from '../helpers/http.ts';
import { type ServerProcess, startServerProcess } from '../helpers/serverProcess.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { Browser, PASSWORD, formFields, obtainCode, registerClient, tokenRequest } from './helpers.ts';

/**
 * Zero tolerance across processes: an OAuth access token revoked at /oauth/revoke (on either server), or an OAuth
 * client deleted (or its secret rotated) from the dashboard, on server A is refused by server B on the very next request
 * (no sleep, no retry); both servers share one DATA_DIR.
 */
t.setTimeout(300_000);

const dataDir = mkdtempSync(join(tmpdir(), 'outreach-oauth-in-force-'));
// Generous: the first check on B may wait for B's projections to read A's sign-in, grant and token on a loaded machine.
const env = { DATA_DIR: dataDir, CREDENTIAL_CATCH_UP_MS: '10000' };
const ownerEmail = 'owner@oauth-in-force.test';
const setup = await startTestApp({ dataDir });
const tenant = await createTenant(setup.services, { email: ownerEmail, password: PASSWORD });
const clients = [await registerClient(setup, tenant, 'none'), await registerClient(setup, tenant, 'none')];
const confidential = await registerClient(setup, tenant, 'client_secret_post');
await setup.close();

const servers: ServerProcess[] = [];
t.teardown(async () => {
  await Promise.all(servers.map((s) => s.kill()));
  rmSync(dataDir, { recursive: true, force: true });
});
servers.push(await startServerProcess(env), await startServerProcess(env));
const [a, b] = servers as [ServerProcess, ServerProcess];

const status = async (server: ServerProcess, token: string) =>
  (await fetch(`${server.url}${webhooksPath(tenant.siteId)}`, { headers: { authorization: `Bearer ${token}` } })).status;

/** An access token for `clientId`, through the whole code flow on `server`. */
async function accessToken(server: ServerProcess, browser: Browser, clientId: string): Promise<string> {
  const { code, verifier, redirectUri } = await obtainCode(browser, server.url, { clientId }, [tenant.siteId]);
  const r = await tokenRequest(server.url, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId });
  if (r.status !== 200) throw new Error(`token: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.access_token as string;
}

const onA = new Browser(a.url);
t.equal((await onA.signIn(ownerEmail)).status, 303, 'signed in on server A');

// B's projection thread starts after B loaded the read models; A may have moved them on in between
// (both share the file). This once left B waiting the whole CREDENTIAL_CATCH_UP_MS and answering 503.
t.test('a token issued on A is accepted by B on its first use', async (t) => {
  const token = await accessToken(a, onA, clients[0]!.clientId);
  const started = Date.now();
  const first = await status(b, token);
  t.equal(first, 200, `accepted by B (got ${first} after ${Date.now() - started} ms)`);
});

t.test('an access token revoked on server A is refused by server B at once', async (t) => {
  for (let i = 0; i < 3; i++) {
    const token = await accessToken(a, onA, clients[0]!.clientId);
    t.equal(await status(a, token), 200, `token ${i} accepted by A`);
    t.equal(await status(b, token), 200, `token ${i} accepted by B`);
    const revoked = await fetch(`${a.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: clients[0]!.clientId }).toString(),
    });
    t.equal(revoked.status, 200, 'revoked on A');
    const [fromB, fromA] = await Promise.all([status(b, token), status(a, token)]);
    t.equal(fromB, 401, `token ${i} refused by B right after the revocation returned`);
    t.equal(fromA, 401, `token ${i} refused by A too`);
  }
});

// RFC 7009 §2.2: a 200 means revoked. The token is issued on A and revoked on B before B used or saw it,
// so B must catch its read models up to find it (it once answered 200 and left it alive).
t.test('an access token issued on A and revoked right away on B is dead', async (t) => {
  for (let i = 0; i < 5; i++) {
    const token = await accessToken(a, onA, clients[0]!.clientId);
    const revoked = await fetch(`${b.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: clients[0]!.clientId }).toString(),
    });
    t.equal(revoked.status, 200, `token ${i}: B answers 200`);
    t.equal(await status(a, token), 401, `token ${i}: refused by A, where it was issued`);
  }
});

t.test('an OAuth client deleted on server A: its tokens are refused by server B at once', async (t) => {
  const clientId = clients[1]!.clientId;
  const tokens = [await accessToken(a, onA, clientId), await accessToken(a, onA, clientId)];
  for (const token of tokens) {
    t.equal(await status(a, token), 200, 'accepted by A');
    t.equal(await status(b, token), 200, 'accepted by B');
  }
  const page = (await onA.request('/dashboard/oauth-apps')).text;
  const action = `/dashboard/oauth-apps/${clientId}/delete`;
  t.equal((await onA.request(action, { form: formFields(page, action) })).status, 303, 'deleted from the dashboard of A');
  for (const token of tokens) t.equal(await status(b, token), 401, 'refused by B right after the deletion returned');
  for (const token of tokens) t.equal(await status(a, token), 401, 'and by A');
});

t.test('an OAuth client secret rotated on server A: B refuses the old secret and takes the new one at once', async (t) => {
  const { clientId, clientSecret } = confidential;
  const { code, verifier, redirectUri } = await obtainCode(onA, a.url, { clientId }, [tenant.siteId]);
  const issued = await tokenRequest(b.url, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId, client_secret: clientSecret! });
  t.equal(issued.status, 200, 'code from A redeemed on B with the secret');
  const refreshToken = issued.json.refresh_token as string;

  const page = (await onA.request('/dashboard/oauth-apps')).text;
  const action = `/dashboard/oauth-apps/${clientId}/rotate-secret`;
  const rotated = await onA.request(action, { form: formFields(page, action) });
  t.equal(rotated.status, 200, 'rotated from the dashboard of A');
  const newSecret = /id="client_secret">(svc_ocsec_[A-Za-z0-9_-]+)</.exec(rotated.text)?.[1];
  t.ok(newSecret, 'new secret shown once');

  const old = await tokenRequest(b.url, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, client_secret: clientSecret! });
  t.equal(old.status, 401, 'the old secret refused by B right after the rotation returned');
  t.equal(old.json.error, 'invalid_client');
  const fresh = await tokenRequest(b.url, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, client_secret: newSecret! });
  t.equal(fresh.status, 200, 'the new secret accepted by B at once');
});
