import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';

/** The store opened for reading only (the auditor's commands on a DATA_DIR they may not write to). */
t.test('a read-only store reads what a writer appended, follows its later appends, and refuses its own', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'events-ro-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'events.sqlite');
  const writer = new SqliteEventStore(file);
  t.teardown(() => writer.close());
  await writer.append('s-1', [{ type: 'Noted', data: { n: 1 } }], 'no_stream');

  const reader = new SqliteEventStore(file, { readOnly: true, pollIntervalMs: 20 });
  t.teardown(() => reader.close());
  t.same((await reader.readStream('s-1')).map((e) => e.data), [{ n: 1 }]);
  const head = await reader.headPosition();
  const sizeBefore = statSync(file).size;
  await t.rejects(reader.append('s-2', [{ type: 'Noted', data: {} }], 'no_stream'), /open for reading only/);
  await t.rejects(reader.deleteStream('s-1'), /open for reading only/);
  t.equal(await reader.headPosition(), head, 'nothing appended');
  t.equal(statSync(file).size, sizeBefore);

  // Another process's append (here another connection) is seen by the reader's wait and reads.
  const { position } = await writer.append('s-1', [{ type: 'Noted', data: { n: 2 } }], 0n);
  await reader.waitForNew(head, 2_000);
  t.equal(await reader.headPosition(), position);
  t.same((await reader.readAll({ after: head })).map((e) => e.data), [{ n: 2 }]);
});

t.test('a file that is not there is an error, not a new log', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'events-ro-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.throws(() => new SqliteEventStore(join(dir, 'events.sqlite'), { readOnly: true }));
  t.throws(() => statSync(join(dir, 'events.sqlite')), 'none created');
});

t.test('a log written before marks is read without them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'events-ro-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'events.sqlite');
  const writer = new SqliteEventStore(file);
  await writer.append('s-1', [{ type: 'Noted', data: { n: 1 } }], 'no_stream');
  await writer.close();
  const old = new Database(file);
  old.exec('DROP TABLE event_marks');
  old.close();
  const reader = new SqliteEventStore(file, { readOnly: true });
  t.teardown(() => reader.close());
  t.same((await reader.readStream('s-1')).map((e) => e.data), [{ n: 1 }]);
  t.equal(await reader.markPosition('credentials'), null);
});
