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
  const body = (await res.json()) as { subscriptions: Array<{ id: string; label: string; url: string }> };
  return body.subscriptions;
};
/** The label as the server lists it, polled until `expected` or 5 s. */
const labelBecomes = async (s: ServerProcess, expected: string) => {
  const until = Date.now() + 5_000;
  let label = '';
  while (Date.now() < until) {
    label = (await listed(s))[0]!.label;
    if (label === expected) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return label;
};

t.test('a rebuild by the CLI is served at once, and later changes build on it', async (t) => {
  server = await startServerProcess(env);
  const created = await fetch(`${server.url}${webhooksPath(site.siteId)}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: 'https://example.com/hook', eventTypes: ['outreach.reply_sent'], label: 'original' }),
  });
  t.equal(created.status, 201);
  const { subscription } = (await created.json()) as { subscription: { id: string } };
  await stop(server);

  const db = new Database(join(dataDir, 'readmodels.sqlite'));
  const changed = db.prepare("UPDATE documents SET doc = json_set(doc, '$.label', 'gone wrong') WHERE collection = 'webhookSubscriptions'").run().changes;
  db.close();
  t.equal(changed, 1);

  server = await startServerProcess(env);
  t.equal((await listed(server))[0]!.label, 'gone wrong', 'the server starts from the document as the file holds it');

  const rebuilt = await cli('projections', 'rebuild', 'webhookSubscriptions');
  t.same(rebuilt.json<{ rebuilt: string[] }>().rebuilt, ['webhookSubscriptions']);
  t.equal(await labelBecomes(server, 'original'), 'original', 'the rebuilt document is served');

  const patched = await fetch(`${server.url}${webhooksPath(site.siteId)}/${subscription.id}`, {
    method: 'PATCH',
    headers,
    body: JSON.stringify({ url: 'https://example.com/hook2' }),
  });
  t.equal(patched.status, 200);
  t.same(
    (await listed(server)).map(({ label, url }) => ({ label, url })),
    [{ label: 'original', url: 'https://example.com/hook2' }],
    "the projection's next change applies to the rebuilt document",
  );

  // The file too: a restart serves the same.
  await stop(server);
  server = await startServerProcess(env);
  t.same(
    (await listed(server)).map(({ label, url }) => ({ label, url })),
    [{ label: 'original', url: 'https://example.com/hook2' }],
  );
  await stop(server);
  server = null;
});
