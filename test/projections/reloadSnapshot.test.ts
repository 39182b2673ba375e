import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { SqliteReadModelStore } from '../../src/adapters/sqlite/sqliteReadModelStore.ts';
import { ProjectionRunner } from '../../src/projections/projectionRunner.ts';
import { reloadFromFile } from '../../src/projections/projectionThread.ts';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';

/**
 * A process that follows the read-model file another writer keeps moving (a second server's
 * projection thread) must never hold a checkpoint ahead of its documents: a credential read right
 * after would miss a key the checkpoint says is there. Each commit of the writer below adds document
 * `d{n}` and moves the checkpoint to n in one transaction; every reload must see both or neither.
 */
const dir = mkdtempSync(join(tmpdir(), 'reload-snapshot-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'readmodels.sqlite');
const readModels = new SqliteReadModelStore(file);

const writer = new Worker(
  `
  const { workerData, parentPort } = require('node:worker_threads');
  const Database = require('better-sqlite3');
  const db = new Database(workerData.file);
  db.pragma('busy_timeout = 10000');
  const putDoc = db.prepare('INSERT INTO documents (collection, id, doc, position) VALUES (?, ?, ?, ?)');
  const putCheckpoint = db.prepare('INSERT INTO checkpoints (name, version, position) VALUES (?, 1, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position');
  // One document and the checkpoint per commit, commits back to back: the table grows while it is reloaded.
  const commit = db.transaction((n) => {
    putDoc.run('things', 'd' + n, JSON.stringify({ id: 'd' + n, pad: 'x'.repeat(200) }), n);
    putCheckpoint.run('things', n);
  });
  let stop = false;
  parentPort.on('message', () => { stop = true; });
  (function loop(n) {
    for (let i = 0; i < 50 && n < 20000; i++) commit(n++);
    if (stop || n >= 20000) { db.close(); parentPort.postMessage('done'); return; }
    setImmediate(loop, n);
  })(1);
  `,
  { eval: true, workerData: { file } },
);
const done = new Promise((resolve) => writer.once('message', resolve));
t.teardown(async () => {
  writer.postMessage('stop');
  await done;
  await writer.terminate();
  await readModels.close();
});

const events = new SqliteEventStore(join(dir, 'events.sqlite'));
t.teardown(() => events.close());
const runner = new ProjectionRunner(events, readModels, [{ name: 'things', version: 1, handles: [], apply: async () => {} }] as never);

t.test('a reload never holds a checkpoint ahead of its documents', async (t) => {
  const deadline = Date.now() + 3_000;
  let reloads = 0;
  let torn = 0;
  while (Date.now() < deadline) {
    reloadFromFile(readModels, runner);
    reloads++;
    const position = runner.positionOf(['things']);
    if (position > 0n && !(await readModels.get('things', `d${position}`))) torn++;
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.ok(reloads >= 10, `reloaded ${reloads} times while the writer committed`);
  t.equal(torn, 0, 'every checkpoint came with the documents it covers');
});
