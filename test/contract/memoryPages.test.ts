import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteReadModelStore } from '../../src/adapters/sqlite/sqliteReadModelStore.ts';
import type { Document, PageQuery } from '../../src/ports/readModelStore.ts';

/**
 * The SQLite store's pages walk its declared indexes in memory while its cache holds the file's
 * state. These pages must be exactly what a plain filter and sort of the documents gives, after any
 * mix of inserts, updates (the order field and the filtered fields included), removals, bulk loads
 * and another process's writes.
 */

const INDEXES = { items: [['siteId', 'at'], ['siteId', 'status', 'at']] } as const;

interface Item extends Document {
  id: string;
  siteId: string;
  status: string;
  at: string | number;
  n: number;
}

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s % n;
  };
}

/** The page as a plain filter and sort gives it (numbers before text, ties by id). */
function expected(docs: Iterable<Item>, query: PageQuery): string[] {
  const cmp = (a: string | number, b: string | number) => (typeof a !== typeof b ? (typeof a === 'number' ? -1 : 1) : a < b ? -1 : a > b ? 1 : 0);
  const key = (d: Item) => [d.at, d.id] as const;
  const order = (a: Item, b: Item) => (cmp(key(a)[0], key(b)[0]) || cmp(a.id, b.id)) * (query.direction === 'desc' ? -1 : 1);
  return [...docs]
    .filter((d) => Object.entries(query.filter).every(([f, v]) => (d[f] ?? null) === v))
    .filter((d) => Object.entries(query.ranges ?? {}).every(([f, r]) => (r.gt === undefined || (d[f] as number) > (r.gt as number)) && (r.lt === undefined || (d[f] as number) < (r.lt as number))))
    .filter((d) => !query.after || order(d, { ...d, at: query.after.value, id: query.after.id }) > 0)
    .sort(order)
    .slice(0, query.limit)
    .map((d) => d.id);
}

t.test('pages walked in memory equal a plain filter and sort through inserts, updates, removals and bulk loads', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'memory-pages-'));
  const store = new SqliteReadModelStore(join(dir, 'readmodels.sqlite'), INDEXES);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const next = random(7);
  const docs = new Map<string, Item>();
  const item = (i: number): Item => ({
    id: `i${String(i).padStart(4, '0')}`,
    siteId: `s${next(2)}`,
    status: ['open', 'resolved', 'declined'][next(3)]!,
    // Many ties; a few numbers among the text (SQLite orders numbers first).
    at: next(10) === 0 ? next(5) : `2026-01-01T00:00:${String(next(30)).padStart(2, '0')}.000Z`,
    n: next(100),
  });
  // One event per change: a document is written at most once per event position.
  type Change = { put: Item } | { remove: string };
  let checkpoint = -1n;
  const write = async (changes: Change[]) => {
    const from = checkpoint;
    const to = from + BigInt(changes.length) + (from === -1n ? 1n : 0n);
    t.ok(
      await store.applyBatch('p', 1, from, to, async (w) => {
        let at = from === -1n ? 0n : from;
        for (const change of changes) {
          at++;
          if ('put' in change) await w(at).put('items', change.put);
          else await w(at).remove('items', change.remove);
        }
      }),
    );
    checkpoint = to;
  };
  const check = async (what: string) => {
    for (let q = 0; q < 12; q++) {
      const query: PageQuery = {
        filter: next(2) === 0 ? { siteId: `s${next(2)}` } : { siteId: `s${next(2)}`, status: ['open', 'resolved', 'declined'][next(3)]! },
        ...(next(3) === 0 ? { ranges: { n: { gt: next(50), lt: 50 + next(50) } } } : {}),
        orderBy: 'at',
        direction: next(2) === 0 ? 'desc' : 'asc',
        after: null,
        limit: 5 + next(40),
      };
      // Every page of the query, by its cursor, against the whole expected order.
      const walked: string[] = [];
      for (let guard = 0; guard < 400; guard++) {
        const page = await store.page<Item>('items', query);
        walked.push(...page.map((d) => d.id));
        if (page.length < query.limit) break;
        const last = page.at(-1)!;
        query.after = { value: last.at, id: last.id };
      }
      t.same(walked, expected(docs.values(), { ...query, after: null, limit: Infinity }), `${what}: ${JSON.stringify({ ...query, after: null })}`);
    }
  };

  // A bulk load (more than the store updates one by one), then a page builds the indexes.
  const bulk: Change[] = [];
  for (let i = 0; i < 1_500; i++) {
    const doc = item(i);
    docs.set(doc.id, doc);
    bulk.push({ put: doc });
  }
  await write(bulk);
  await check('after a bulk load');
  for (let round = 0; round < 15; round++) {
    const changes: Change[] = [];
    for (let k = 0; k < 10; k++) {
      const id = `i${String(next(1_600)).padStart(4, '0')}`;
      if (next(3) === 0 && docs.has(id)) {
        docs.delete(id);
        changes.push({ remove: id });
      } else {
        const doc = { ...item(0), id };
        docs.set(id, doc);
        changes.push({ put: doc });
      }
    }
    await write(changes);
    await check(`after round ${round}`);
  }
  t.same(
    (await store.page<Item>('items', { filter: { siteId: 's0' }, orderBy: 'at', direction: 'desc', limit: 3 }))[0],
    docs.get(expected(docs.values(), { filter: { siteId: 's0' }, orderBy: 'at', direction: 'desc', limit: 1 })[0]!),
    'whole documents',
  );
});

t.test('a document whose order field is not a string or a number: the page is still the SQL one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'memory-pages-'));
  const store = new SqliteReadModelStore(join(dir, 'readmodels.sqlite'), INDEXES);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await store.applyBatch('p', 1, -1n, 1n, async (w) => {
    await w(1n).put('items', { id: 'a', siteId: 's', at: '2026-01-01T00:00:01.000Z' });
    await w(1n).put('items', { id: 'b', siteId: 's' });
    await w(1n).put('items', { id: 'c', siteId: 's', at: '2026-01-01T00:00:02.000Z' });
  });
  const query: PageQuery = { filter: { siteId: 's' }, orderBy: 'at', direction: 'asc', limit: 10 };
  t.same((await store.page('items', query)).map((d) => d.id), ['b', 'a', 'c'], 'SQLite orders a missing value first');
  await store.applyBatch('p', 1, 1n, 2n, async (w) => w(2n).remove('items', 'b'));
  t.same((await store.page('items', query)).map((d) => d.id), ['a', 'c'], 'and the walk in memory serves the page once it is gone');
});

t.test('another process writes: pages come from the file until this store has its state, then from memory again', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'memory-pages-'));
  const file = join(dir, 'readmodels.sqlite');
  const here = new SqliteReadModelStore(file, INDEXES);
  const other = new SqliteReadModelStore(file, INDEXES);
  t.teardown(async () => {
    await here.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const doc = (id: string, status: string) => ({ id, siteId: 's', status, at: `2026-01-01T00:00:0${id}.000Z` });
  await here.applyBatch('p', 1, -1n, 1n, async (w) => {
    for (const id of ['1', '2', '3']) await w(1n).put('items', doc(id, 'open'));
  });
  const open: PageQuery = { filter: { siteId: 's', status: 'open' }, orderBy: 'at', direction: 'desc', limit: 10 };
  t.same((await here.page('items', open)).map((d) => d.id), ['3', '2', '1']);

  await other.getCheckpoint('p');
  t.ok(await other.applyBatch('p', 1, 1n, 2n, async (w) => w(2n).put('items', doc('2', 'resolved'))));
  const after = await here.page<{ id: string; status: string }>('items', open);
  t.same(after.map((d) => [d.id, d.status]), [['3', 'open'], ['1', 'open']], "the other process's write, at once");

  // This store catches up (as the API thread does when the projection thread's batch arrives).
  await here.getCheckpoint('p');
  t.same((await here.page('items', open)).map((d) => d.id), ['3', '1'], 'the same page once the cache holds it');
  await here.applyBatch('p', 1, 2n, 3n, async (w) => w(3n).put('items', doc('4', 'open')));
  t.same((await here.page('items', open)).map((d) => d.id), ['4', '3', '1'], "and this store's own writes");
});
