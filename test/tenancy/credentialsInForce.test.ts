import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { outreach } from '../helpers/cli.ts';
import { webhooksPath } from '../helpers/http.ts';
import { type ServerProcess, startServerProcess } from '../helpers/serverProcess.ts';

/**
 * Zero tolerance: the request right after `outreach apikey create|revoke` returns (no sleep, no
 * retry) sees the change, against real server processes sharing the CLI's data directory.
 */
t.setTimeout(300_000);

const dataDir = mkdtempSync(join(tmpdir(), 'outreach-in-force-'));
const env = { DATA_DIR: dataDir };
const cli = async (...args: string[]) => {
  const r = await outreach(['--json', ...args], env);
  if (r.code !== 0) throw new Error(`outreach ${args.join(' ')}: ${r.stderr}`);
  return r;
};

const team = (await cli('team', 'create', '--name', 'X', '--owner-email', 'x@in-force.test')).json<{ teamId: string }>();
const site = (await cli('site', 'create', '--team', team.teamId, '--domain', 'in-force.test')).json<{ siteId: string }>();

const servers: ServerProcess[] = [];
t.teardown(async () => {
  await Promise.all(servers.map((s) => s.kill()));
  rmSync(dataDir, { recursive: true, force: true });
});
servers.push(await startServerProcess(env), await startServerProcess(env));

const status = async (server: ServerProcess, key: string) =>
  (await fetch(`${server.url}${webhooksPath(site.siteId)}`, { headers: { authorization: `Bearer ${key}` } })).status;

t.test('create then use, revoke then refuse: one server', async (t) => {
  const [server] = servers;
  for (let i = 0; i < 3; i++) {
    const { id, key } = (await cli('apikey', 'create', '--team', team.teamId, '--scopes', 'webhooks:read')).json<{ id: string; key: string }>();
    t.equal(await status(server!, key), 200, `key ${i} accepted on the request right after create returned`);
    await cli('apikey', 'revoke', '--id', id);
    t.equal(await status(server!, key), 401, `key ${i} refused on the request right after revoke returned`);
  }
});

t.test('two server processes on one data directory: both see every change at once', async (t) => {
  const [a, b] = servers;
  for (let i = 0; i < 3; i++) {
    const { id, key } = (await cli('apikey', 'create', '--team', team.teamId, '--scopes', 'webhooks:read')).json<{ id: string; key: string }>();
    // Used on both, so each has it (and its site) warm in its read path before the revocation.
    t.equal(await status(a!, key), 200, `key ${i} accepted by server A at once`);
    t.equal(await status(b!, key), 200, `key ${i} accepted by server B at once`);
    await cli('apikey', 'revoke', '--id', id);
    const [onB, onA] = await Promise.all([status(b!, key), status(a!, key)]);
    t.equal(onA, 401, `key ${i} refused by server A right after revoke`);
    t.equal(onB, 401, `key ${i} refused by server B right after revoke`);
  }
});
