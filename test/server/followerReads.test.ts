import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { outreach } from '../helpers/cli.ts';
import { type ServerProcess, startServerProcess } from '../helpers/serverProcess.ts';

/**
 * Two API nodes on one DATA_DIR, the second without the projections (RUN_PROJECTIONS=false, as the
 * README's scale-out says): a write on the first reaches the second's reads by id and its lists
 * within a second ("Other changes reach a running server within a second").
 */
t.setTimeout(180_000);
const dataDir = mkdtempSync(join(tmpdir(), 'follower-reads-'));
const env = { DATA_DIR: dataDir, WRITE_RATE_LIMIT_PER_MINUTE: '1000' };
const servers: ServerProcess[] = [];
t.teardown(async () => {
  await Promise.all(servers.map((s) => s.kill()));
  rmSync(dataDir, { recursive: true, force: true });
});

const cli = async <T>(...args: string[]): Promise<T> => {
  const r = await outreach(['--json', ...args], env);
  if (r.code !== 0) throw new Error(`outreach ${args.join(' ')}: ${r.stderr} ${r.stdout}`);
  return JSON.parse(r.stdout) as T;
};
const team = await cli<{ teamId: string }>('team', 'create', '--name', 'Follow', '--owner-email', 'owner@follow.test');
const site = await cli<{ siteId: string }>('site', 'create', '--team', team.teamId, '--domain', 'follow.test', '--plan', 'advanced');
const { key } = await cli<{ key: string }>('apikey', 'create', '--team', team.teamId, '--scopes', 'inbox:write,inbox:read,webhooks:write,webhooks:read');

servers.push(await startServerProcess(env));
servers.push(await startServerProcess({ ...env, RUN_PROJECTIONS: 'false', RUN_WEBHOOKS: 'false', RUN_AGENT: 'false', RUN_AGENT_RUNNER: 'false' }));
const [writer, follower] = servers as [ServerProcess, ServerProcess];
const auth = { authorization: `Bearer ${key}` };
const api = `/api/v1/sites/${site.siteId}/outreach`;

const post = async (path: string, body: unknown) => {
  const r = await fetch(`${writer.url}${api}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`POST ${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Record<string, any>;
};
/** Milliseconds until `seen` holds for the follower's answer to GET `path` (gives up after 5 s). */
const lag = async (path: string, seen: (status: number, body: any) => boolean) => {
  const started = Date.now();
  for (;;) {
    const r = await fetch(`${follower.url}${api}${path}`, { headers: auth });
    if (seen(r.status, await r.json())) return Date.now() - started;
    if (Date.now() - started > 5_000) return Infinity;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

t.test('an ingestion on one node: the conversation by id on the other within a second', async (t) => {
  for (let i = 0; i < 3; i++) {
    const ingested = await post('/inbox/messages', { from: `p${i}@prospect.test`, subject: 'Guest post', bodyText: `Hello ${i}`, runExtraction: false });
    const id = ingested.conversationIds[0];
    t.ok((await lag(`/conversations/${id}`, (status) => status === 200)) < 1_000, `conversation ${i}`);
  }
});

t.test('a webhook subscription created and deleted on one node: listed and gone on the other within a second', async (t) => {
  const created = await post('/webhooks', { label: 'x', url: 'https://hooks.example.com/h', eventTypes: ['outreach.message_received'] });
  const id = created.subscription?.id ?? created.id;
  t.type(id, 'string');
  const listed = (_: number, body: any) => (body.subscriptions ?? body.data ?? []).some((s: { id: string }) => s.id === id);
  t.ok((await lag('/webhooks', listed)) < 1_000, 'listed');
  t.equal((await fetch(`${writer.url}${api}/webhooks/${id}`, { method: 'DELETE', headers: auth })).status, 200, 'deleted');
  t.ok((await lag('/webhooks', (status, body) => status === 200 && !listed(status, body))) < 1_000, 'gone');
});
