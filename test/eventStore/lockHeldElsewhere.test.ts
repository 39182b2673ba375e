import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';

/**
 * Another process holds the event log's write lock (a CLI command, an `outreach worker`): a lone
 * append, which the store would commit on the calling thread, goes to the writer thread instead of
 * waiting for the lock in SQLite's busy handler on the event loop.
 */
const dir = mkdtempSync(join(tmpdir(), 'lock-held-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('a lone append waits for another connection\'s lock off the event loop, then commits', async (t) => {
  const file = join(dir, 'events.sqlite');
  const store = new SqliteEventStore(file);
  t.teardown(() => store.close());
  await store.append('warm-up', [{ type: 'Noted', data: {} }], 'no_stream');

  const other = new Database(file);
  t.teardown(() => other.close());
  other.exec('BEGIN IMMEDIATE');
  const ticks: number[] = [];
  const timer = setInterval(() => ticks.push(performance.now()), 10);
  const started = performance.now();
  const appended = store.append('while-locked', [{ type: 'Noted', data: { n: 1 } }], 'no_stream');
  await new Promise((resolve) => setTimeout(resolve, 300));
  other.exec('COMMIT');
  const result = await appended;
  clearInterval(timer);

  const gaps = ticks.map((at, i) => at - (i === 0 ? started : ticks[i - 1]!));
  t.ok(ticks.length >= 15, `the loop kept running while the lock was held (${ticks.length} ticks)`);
  t.ok(Math.max(...gaps) < 150, `no long stall (longest gap ${Math.round(Math.max(...gaps))} ms)`);
  t.ok(performance.now() - started >= 300, 'the append resolved only after the lock was released');
  t.equal(result.nextExpectedRevision, 0n);
  const stored = await store.readStream('while-locked');
  t.same(stored.map((e) => e.data), [{ n: 1 }], 'stored once');

  const next = await store.append('after', [{ type: 'Noted', data: {} }], 'no_stream');
  t.ok(next.position > result.position, 'later appends go on as before');
});
