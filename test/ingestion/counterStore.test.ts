import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { SqliteCounterStore } from '../../src/adapters/sqlite/sqliteCounterStore.ts';
import type { CounterStore } from '../../src/ports/counterStore.ts';
import { tempCounterStore } from '../helpers/tempCounterStore.ts';

/** The CounterStore contract: atomic increment-and-read shared by every instance on one store. */
async function contract(t: Test, open: () => Promise<CounterStore>) {
  const a = await open();
  const b = await open();
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const expires = new Date(Date.now() + 3_600_000);
  const key = `k-${Math.random()}`;
  t.equal(await a.increment(key, 1, expires), 1, 'a new counter starts at 0');
  t.equal(await b.increment(key, 1, expires), 2, 'the other instance sees the same counter');
  t.equal(await a.increment(key, -1, expires), 1, 'negative increments give back');
  const values = await Promise.all(Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).increment(key, 1, expires)));
  t.equal(new Set(values).size, 400, 'every concurrent increment read a distinct value');
  t.equal(Math.max(...values), 401, 'no increment lost');
  t.equal(await a.increment(`other-${key}`, 5, expires), 5, 'keys are independent');
  const prefix = `range-${Math.random()}:`;
  for (const [n, by] of [[9, 1], [10, 2], [11, 0], [12, 3], [20, 4]] as const) await (n % 2 ? a : b).increment(`${prefix}${String(n).padStart(4, '0')}`, by, expires);
  t.same(
    await b.range(`${prefix}0010`, `${prefix}0012`),
    [
      { key: `${prefix}0010`, count: 2 },
      { key: `${prefix}0011`, count: 0 },
      { key: `${prefix}0012`, count: 3 },
    ],
    'range: the keys from one to the other, both included, in order, from either instance',
  );
  t.same(await a.range(`${prefix}0013`, `${prefix}0019`), [], 'an empty range');
}

t.test('SQLite counter store (two connections on one file)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'counters-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await contract(t, async () => new SqliteCounterStore(join(dir, 'counters.sqlite')));
});

t.test('SQLite counter store forgets expired windows relative to the service clock', async (t) => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const store = tempCounterStore(t, () => now);
  await store.increment('old', 7, new Date(now + 60_000));
  now += 10 * 60_000;
  for (let i = 0; i < 1000; i++) await store.increment('busy', 1, new Date(now + 60_000)); // the sweep runs every 1000 writes
  t.equal(await store.increment('old', 1, new Date(now + 60_000)), 1, 'the expired counter was swept');
  t.equal(await store.increment('busy', 0, new Date(now + 60_000)), 1000, 'a live counter was kept');
});

t.test('SQLite counter store: increments asked in one turn commit together, each reading the value its own increment made', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'counters-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = new SqliteCounterStore(join(dir, 'c.sqlite'));
  const other = new SqliteCounterStore(join(dir, 'c.sqlite'));
  t.teardown(async () => {
    await store.close();
    await other.close();
  });
  const expires = new Date(Date.now() + 3_600_000);
  const values = await Promise.all([
    store.increment('k', 1, expires),
    store.increment('k', -1, expires),
    store.increment('j', 5, expires),
    store.increment('k', 3, expires),
    store.increment('k', 0, expires),
  ]);
  t.same(values, [1, 0, 5, 3, 3], 'in the order asked, per key');
  t.equal(await other.increment('k', 0, expires), 3, 'the batch is committed for the other connection');
  t.equal(await other.increment('j', 0, expires), 5);
});

/** A store whose counter `k` is at 1, and another connection (another instance on the same data directory) holding the file's write lock. */
async function lockedByAnother(t: Test, options: { lockWaitMs?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'counters-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'c.sqlite');
  const store = new SqliteCounterStore(file, Date.now, options);
  t.teardown(() => store.close());
  const expires = new Date(Date.now() + 3_600_000);
  t.equal(await store.increment('k', 1, expires), 1);
  const other = new Database(file);
  t.teardown(() => other.close());
  other.exec('BEGIN IMMEDIATE');
  return { store, other, expires };
}

t.test('SQLite counter store: another connection holding the lock is waited for off the event loop', async (t) => {
  const { store, other, expires } = await lockedByAnother(t);
  other.prepare("UPDATE counters SET count = count + 10 WHERE key = 'k'").run();
  const ticks: number[] = [];
  const timer = setInterval(() => ticks.push(performance.now()), 10);
  const started = performance.now();
  const first = store.increment('k', 1, expires);
  await new Promise((resolve) => setTimeout(resolve, 150));
  const second = store.increment('k', 2, expires); // asked while the first waits: commits after it
  await new Promise((resolve) => setTimeout(resolve, 150));
  other.exec('COMMIT');
  const values = await Promise.all([first, second]);
  clearInterval(timer);

  const gaps = ticks.map((at, i) => at - (i === 0 ? started : ticks[i - 1]!));
  t.ok(ticks.length >= 15, `the loop kept running while the lock was held (${ticks.length} ticks)`);
  t.ok(Math.max(...gaps) < 150, `no long stall (longest gap ${Math.round(Math.max(...gaps))} ms)`);
  t.ok(performance.now() - started >= 300, 'the increments committed only after the lock was released');
  t.same(values, [12, 14], "in the order asked, after the other connection's write");
});

t.test('SQLite counter store: an increment that cannot get the lock in time fails and counts nothing', async (t) => {
  const { store, other, expires } = await lockedByAnother(t, { lockWaitMs: 200 });
  const started = performance.now();
  await t.rejects(store.increment('k', 1, expires), { code: 'SQLITE_BUSY' }, 'fails with SQLITE_BUSY');
  const waited = performance.now() - started;
  t.ok(waited >= 200 && waited < 1_000, `after about lockWaitMs (${Math.round(waited)} ms)`);
  other.exec('ROLLBACK');
  t.equal(await store.increment('k', 1, expires), 2, 'the failed increment was not counted; later ones go on');
});

t.test('MongoDB counter store', { skip: process.env.MONGODB_URL ? false : 'MONGODB_URL not set' }, async (t) => {
  const { MongoCounterStore } = await import('../../src/adapters/mongodb/mongoCounterStore.ts');
  await contract(t, () => MongoCounterStore.connect(process.env.MONGODB_URL!, `outreach_test_${process.pid}`));
});
