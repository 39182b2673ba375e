import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { webhooksPath } from '../helpers/http.ts';
import { type ServerProcess, startServerProcess } from '../helpers/serverProcess.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { Browser, PASSWORD, obtainCode, registerClient, tokenRequest } from './helpers.ts';

/** RFC 7009 §2.2: 200 means the token is revoked. An access token issued on A and revoked on B at once must be dead. */
t.setTimeout(300_000);
const dataDir = mkdtempSync(join(tmpdir(), 'outreach-revoke-elsewhere-'));
const env = { DATA_DIR: dataDir, CREDENTIAL_CATCH_UP_MS: '10000' };
const ownerEmail = 'owner@revoke-elsewhere.test';
const setup = await startTestApp({ dataDir });
const tenant = await createTenant(setup.services, { email: ownerEmail, password: PASSWORD });
const client = await registerClient(setup, tenant, 'none');
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
const onA = new Browser(a.url);
t.equal((await onA.signIn(ownerEmail)).status, 303);

t.test('an access token issued on A and revoked on B right away is dead', async (t) => {
  let alive = 0;
  for (let i = 0; i < 5; i++) {
    const { code, verifier, redirectUri } = await obtainCode(onA, a.url, client, [tenant.siteId]);
    const r = await tokenRequest(a.url, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client.clientId });
    const token = r.json.access_token as string;
    const revoked = await fetch(`${b.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: client.clientId }).toString(),
    });
    t.equal(revoked.status, 200, 'B answers 200: revoked');
    const after = await status(a, token);
    if (after !== 401) alive++;
  }
  t.equal(alive, 0, `tokens still accepted after a 200 revocation: ${alive} of 5`);
});
