import { mkdtempSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';

/**
 * The event log's connections keep SQLite's temporary files in memory (EVENT_LOG_TEMP_STORE): with
 * the marks' trigger on `events`, the default made every commit create, write and delete a
 * statement journal file. SQLite puts its temporary files in SQLITE_TMPDIR, read when the first
 * connection of this process opens, so this file points it at a directory of its own before it loads
 * better-sqlite3, and watches it.
 */
const tempDir = mkdtempSync(join(tmpdir(), 'sqlite-tmp-'));
process.env.SQLITE_TMPDIR = tempDir;
const { SqliteEventStore } = await import('../../src/adapters/sqlite/sqliteEventStore.ts');
const dir = mkdtempSync(join(tmpdir(), 'temp-files-'));
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(tempDir, { recursive: true, force: true });
});

t.test('appends, on this thread and on the writer thread, create no temporary file', async (t) => {
  const store = new SqliteEventStore(join(dir, 'events.sqlite'), { marks: { credentials: ['ApiKeyCreated', 'TeamCreated'] } });
  t.teardown(() => store.close());
  const seen: string[] = [];
  const watcher = watch(tempDir, (_event, name) => seen.push(String(name)));
  t.teardown(() => watcher.close());

  // Ingestion-sized: six events of about 1 KB each (a journal past 64 KiB is written to a file).
  const ingestion = (i: number) => Array.from({ length: 6 }, (_, k) => ({ type: k === 5 ? 'ApiKeyCreated' : 'Noted', data: { i, k, text: 'x'.repeat(1_000) } }));
  for (let i = 0; i < 10; i += 1) await store.append(`alone-${i}`, ingestion(i), 'no_stream');
  for (let round = 0; round < 5; round += 1) {
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.append(`together-${round}-${i}`, ingestion(i), 'no_stream')));
  }
  await new Promise((resolve) => setTimeout(resolve, 100));

  t.equal((await store.readAll({ limit: 10_000 })).length, 660, 'every event stored');
  t.same(seen, [], 'no temporary file came and went');
});
