import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { fetch } from 'undici';
import { outreach } from '../helpers/cli.ts';
import { bearer, startTestApp } from '../helpers/testApp.ts';
import { webhooksPath } from '../helpers/http.ts';
import { Browser, PASSWORD } from '../oauth/helpers.ts';

// Each CLI run is a fresh Node process (about 1 s on an idle machine): allow for busy CI machines.
t.setTimeout(300_000);

// The service runs in this process; the CLI appends to the same SQLite file from other processes.
const dataDir = mkdtempSync(join(tmpdir(), 'outreach-xproc-'));
const app = await startTestApp({ dataDir, listen: true });
t.teardown(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});
const env = { DATA_DIR: dataDir };
const cli = (...args: string[]) => outreach(['--json', ...args], env);

/** Polls `probe` until it returns true; resolves to the milliseconds it took, or null after `limitMs`. */
async function within(limitMs: number, probe: () => Promise<boolean>): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started <= limitMs) {
    if (await probe()) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 20));
  }
  return null;
}
const status = async (key: string, siteId: string) => (await fetch(`${app.url}${webhooksPath(siteId)}`, { headers: bearer(key) })).status;

t.test('a key created and revoked by the CLI process takes effect in the running service within 1 second', async (t) => {
  const team = (await cli('team', 'create', '--name', 'X', '--owner-email', 'x@proc.test')).json<{ teamId: string }>();
  const site = (await cli('site', 'create', '--team', team.teamId, '--domain', 'proc.test')).json<{ siteId: string }>();
  const created = await cli('apikey', 'create', '--team', team.teamId, '--scopes', 'webhooks:read');
  t.equal(created.code, 0, created.stderr);
  const { id, key } = created.json<{ id: string; key: string }>();
  const authMs = await within(1_000, async () => (await status(key, site.siteId)) === 200);
  t.not(authMs, null, `the new key authenticates within 1 s (took ${authMs} ms)`);

  const revoked = await cli('apikey', 'revoke', '--id', id);
  t.equal(revoked.code, 0, revoked.stderr);
  const revokeMs = await within(1_000, async () => (await status(key, site.siteId)) === 401);
  t.not(revokeMs, null, `the revoked key is refused within 1 s (took ${revokeMs} ms)`);
});

t.test('a site setting changed by the CLI reaches the service: an unlicensed site answers 403', async (t) => {
  const team = (await cli('team', 'create', '--name', 'Y', '--owner-email', 'y@proc.test')).json<{ teamId: string }>();
  const site = (await cli('site', 'create', '--team', team.teamId, '--domain', 'y.test')).json<{ siteId: string }>();
  const { key } = (await cli('apikey', 'create', '--team', team.teamId, '--scopes', 'inbox:read')).json<{ key: string }>();
  // The suppression list: the webhook subscriptions' list stays open on an unlicensed site.
  const suppressions = async () => (await fetch(`${app.url}/api/v1/sites/${site.siteId}/outreach/suppressions`, { headers: bearer(key) })).status;
  t.not(await within(1_000, async () => (await suppressions()) === 200), null);
  t.equal((await cli('site', 'set', '--site', site.siteId, '--licensed', 'false')).code, 0);
  t.not(await within(1_000, async () => (await suppressions()) === 403), null, 'SITE_NOT_LICENSED within 1 s');
});

t.test("the dashboard takes the CLI's changes at once: a user created signs in, and end-sessions signs them out, at the next request", async (t) => {
  const created = await cli('team', 'create', '--name', 'Z', '--owner-email', 'z@proc.test', '--owner-password', PASSWORD);
  t.equal(created.code, 0, created.stderr);
  const team = created.json<{ teamId: string }>();
  const browser = new Browser(app.url);
  t.equal((await browser.signIn('z@proc.test')).status, 303, 'the first sign-in, right after the command, succeeds');
  t.equal((await browser.request('/dashboard')).status, 200);
  const ended = await cli('team', 'end-sessions', '--team', team.teamId, '--user', 'z@proc.test');
  t.equal(ended.code, 0, ended.stderr);
  const next = await browser.request('/dashboard');
  t.equal(next.status, 303, 'the very next request is signed out');
  t.match(next.location, /\/dashboard\/sign-in/);
});
