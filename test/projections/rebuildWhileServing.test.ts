import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { outreach } from '../helpers/cli.ts';
import { webhooksPath } from '../helpers/http.ts';
import { type ServerProcess, startServerProcess } from '../helpers/serverProcess.ts';

/**
 * `outreach projections rebuild` while `npm start` serves the same data directory: the server
 * serves the rebuilt documents, and its projections go on from them. A rebuild writes documents at
 * the positions of the events that made them, so a server whose checkpoints the rebuild did not move
 * (it was at the head) has nothing in its checkpoints to tell it; a document that had gone wrong
 * (changed here in the file while the server was stopped) is what a rebuild is for.
 */
t.setTimeout(180_000);

const dataDir = mkdtempSync(join(tmpdir(), 'outreach-rebuild-serving-'));
const env = { DATA_DIR: dataDir };
const cli = async (...args: string[]) => {
  const r = await outreach(['--json', ...args], env);
  if (r.code !== 0) throw new Error(`outreach ${args.join(' ')}: ${r.stderr}`);
  return r;
};

const team = (await cli('team', 'create', '--name', 'X', '--owner-email', 'x@rebuild.test')).json<{ teamId: string }>();
const site = (await cli('site', 'create', '--team', team.teamId, '--domain', 'rebuild.test')).json<{ siteId: string }>();
const { key } = (await cli('apikey', 'create', '--team', team.teamId, '--scopes', 'webhooks:read,webhooks:write')).json<{ key: string }>();
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

let server: ServerProcess | null = null;
t.teardown(async () => {
  await server?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

const stop = async (s: ServerProcess) => {
  s.child.kill('SIGTERM');
  await s.exited;
};
const listed = async (s: ServerProcess) => {
  const res = await fetch(`${s.url}${webhooksPath(site.siteId)}`, { headers });
  const body = (await res.json()) as { subscriptions: Array<{ id: string; label: string; url: string; created_at: string }> };
  return body.subscriptions;
};
/**
 * Started and its read models caught up (`/readyz`), as a load balancer waits: on a loaded machine
 * the first request could otherwise meet the credential check's 503 while the server catches up.
 */
const ready = async (s: ServerProcess) => {
  for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
    if ((await fetch(`${s.url}/readyz`)).status === 200) return s;
  }
  throw new Error('the server did not become ready within 60 s');
};
const WRONG_TIME = '1999-01-01T00:00:00.000Z';
const shown = async (s: ServerProcess) => (await listed(s)).map(({ label, url, created_at }) => ({ label, url, wrongTime: created_at === WRONG_TIME }));
/** What the server lists, polled until it is `expected` or 5 s went by. */
const becomes = async (s: ServerProcess, expected: unknown) => {
  const until = Date.now() + 5_000;
  let now: unknown;
  while (Date.now() < until) {
    now = await shown(s);
    if (JSON.stringify(now) === JSON.stringify(expected)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return now;
};

t.test('a rebuild by the CLI is served, and a change right after it builds on it', async (t) => {
  server = await ready(await startServerProcess(env));
  const created = await fetch(`${server.url}${webhooksPath(site.siteId)}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: 'https://example.com/hook', eventTypes: ['outreach.reply_sent'], label: 'original' }),
  });
  t.equal(created.status, 201);
  const { subscription } = (await created.json()) as { subscription: { id: string } };
  await stop(server);

  const db = new Database(join(dataDir, 'readmodels.sqlite'));
  const changed = db
    .prepare("UPDATE documents SET doc = json_set(doc, '$.label', 'gone wrong', '$.created_at', ?) WHERE collection = 'webhookSubscriptions'")
    .run(WRONG_TIME).changes;
  db.close();
  t.equal(changed, 1);

  server = await ready(await startServerProcess(env));
  t.equal((await listed(server))[0]!.label, 'gone wrong', 'the server starts from the document as the file holds it');

  // A client's change lands right after the switch, before the server has been idle once.
  const watch = new Database(join(dataDir, 'readmodels.sqlite'), { readonly: true });
  const switched = () => (watch.prepare('SELECT count FROM rebuilds').pluck().get() as bigint | number | undefined) ?? 0;
  const rebuilding = cli('projections', 'rebuild', 'webhookSubscriptions');
  while (!switched()) await new Promise((r) => setTimeout(r, 2));
  watch.close();
  const patched = await fetch(`${server.url}${webhooksPath(site.siteId)}/${subscription.id}`, {
    method: 'PATCH',
    headers,
    body: JSON.stringify({ url: 'https://example.com/hook2' }),
  });
  t.equal(patched.status, 200);
  t.same((await rebuilding).json<{ rebuilt: string[] }>().rebuilt, ['webhookSubscriptions']);
  const expected = [{ label: 'original', url: 'https://example.com/hook2', wrongTime: false }];
  t.same(await becomes(server, expected), expected, 'the rebuilt document is served, with the change applied to it');

  // The file too: a restart serves the same.
  await stop(server);
  server = await ready(await startServerProcess(env));
  t.same(await shown(server), expected);
  await stop(server);
  server = null;
});
