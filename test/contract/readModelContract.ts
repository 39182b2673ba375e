/**
 * The contract every ReadModelStore adapter honours. Run by test/contract/readModel.test.ts on SQLite
 * always and on MongoDB when MONGODB_URL is set.
 */
import type { Test } from 'tap';
import type { Document, IndexDeclarations, ProjectionWriter, ReadModelStore } from '../../src/ports/readModelStore.ts';

export interface ReadModelStoreUnderTest {
  store: ReadModelStore;
  /** Opens a fresh store on the same data, as a restarted process would. Enables the persistence case. */
  reopen?: (indexes?: IndexDeclarations) => Promise<ReadModelStore>;
  /** Closes whatever is still open and removes the data. Must tolerate an already closed store. */
  cleanup(): Promise<void>;
}

/** `indexes`: the declarations the store opens with (none when absent). */
export type MakeReadModelStore = (indexes?: IndexDeclarations) => Promise<ReadModelStoreUnderTest>;

/** Indexes for some of the page case's query shapes: those pages walk them, the others run without one. */
const PAGE_INDEXES: IndexDeclarations = {
  conversations: [
    ['siteId', 'createdAt'],
    ['siteId', 'aiPaused', 'createdAt'],
    ['siteId', 'status', 'createdAt'],
    ['status', 'n'],
  ],
};

/** A tiny inline projection over a list of events, to replay the same batch twice. */
interface TestEvent {
  position: bigint;
  type: 'ItemAdded' | 'ItemRenamed' | 'ItemCounted' | 'ItemRemoved' | 'NoteAdded';
  id: string;
  name?: string;
}

const HISTORY: TestEvent[] = [
  { position: 3n, type: 'ItemAdded', id: 'a', name: 'apple' },
  { position: 5n, type: 'ItemAdded', id: 'b', name: 'banana' },
  { position: 8n, type: 'ItemCounted', id: 'a' },
  { position: 9n, type: 'ItemAdded', id: 'c', name: 'cherry' },
  { position: 12n, type: 'ItemRenamed', id: 'a', name: 'apricot' },
  { position: 13n, type: 'ItemCounted', id: 'a' },
  { position: 14n, type: 'ItemRemoved', id: 'b' },
  { position: 20n, type: 'ItemCounted', id: 'c' },
  { position: 21n, type: 'NoteAdded', id: 'n1', name: 'hello' },
  { position: 22n, type: 'ItemCounted', id: 'a' },
];

async function project(event: TestEvent, w: ProjectionWriter): Promise<void> {
  switch (event.type) {
    case 'ItemAdded':
      await w.put('items', { id: event.id, name: event.name ?? null, count: 0, lastPosition: String(event.position) });
      return;
    case 'ItemRenamed':
    case 'ItemCounted': {
      const item = await w.get<Document & { name: string; count: number }>('items', event.id);
      if (!item) return;
      await w.put('items', {
        ...item,
        name: event.type === 'ItemRenamed' ? (event.name ?? item.name) : item.name,
        count: event.type === 'ItemCounted' ? item.count + 1 : item.count,
        lastPosition: String(event.position),
      });
      return;
    }
    case 'ItemRemoved':
      await w.remove('items', event.id);
      return;
    case 'NoteAdded': {
      const items = await w.find('items', {});
      await w.put('notes', { id: event.id, text: event.name ?? '', itemCount: items.length });
      return;
    }
  }
}

function applyAll(events: TestEvent[]) {
  return async (writer: (position: bigint) => ProjectionWriter) => {
    for (const event of events) await project(event, writer(event.position));
  };
}

export function readModelContract(t: Test, name: string, makeStore: MakeReadModelStore) {
  return t.test(name, async (t) => {
    const withStore = (title: string, body: (t: Test, h: ReadModelStoreUnderTest) => Promise<void>, indexes?: IndexDeclarations) =>
      t.test(title, async (t) => {
        const h = await makeStore(indexes);
        t.teardown(() => h.cleanup());
        await body(t, h);
      });

    await withStore('applyBatch puts, gets, finds and removes documents', async (t, { store }) => {
      t.equal(await store.get('items', 'a'), null, 'nothing before the first batch');
      t.same(await store.find('items', {}), []);
      const applied = await store.applyBatch('p', 1, -1n, 3n, async (w) => {
        await w(1n).put('items', { id: 'a', kind: 'fruit', n: 3, tags: ['x'], nested: { ok: true } });
        await w(2n).put('items', { id: 'b', kind: 'veg', n: 1, note: null });
        await w(3n).put('items', { id: 'c', kind: 'fruit', n: 2 });
        // Ties of a sort key, written against their id order.
        for (const id of ['t3', 't1', 't2']) await w(3n).put('ties', { id, at: 'same' });
        t.same(await w(3n).get('items', 'a'), { id: 'a', kind: 'fruit', n: 3, tags: ['x'], nested: { ok: true } }, 'the writer sees its own batch');
        t.same(
          (await w(3n).find('items', { kind: 'fruit' })).map((d) => d.id).sort(),
          ['a', 'c'],
          'the writer finds its own batch',
        );
        await w(3n).put('other', { id: 'a', in: 'other collection' });
      });
      t.equal(applied, true);

      t.same(await store.get('items', 'a'), { id: 'a', kind: 'fruit', n: 3, tags: ['x'], nested: { ok: true } });
      t.same(await store.get('other', 'a'), { id: 'a', in: 'other collection' }, 'collections are separate');
      t.equal(await store.get('items', 'zzz'), null);
      t.same(
        (await store.find('items', { kind: 'fruit' })).map((d) => d.id).sort(),
        ['a', 'c'],
        'equality filter',
      );
      t.same(
        (await store.find('items', { kind: 'fruit', n: 2 })).map((d) => d.id),
        ['c'],
        'several fields',
      );
      t.same(await store.find('items', { kind: 'mineral' }), [], 'no match');
      t.same(
        (await store.find('items', { note: null })).map((d) => d.id).sort(),
        ['a', 'b', 'c'],
        'null matches a missing field and a null one',
      );
      t.same(
        (await store.find('items', {}, { sortBy: 'n' })).map((d) => d.id),
        ['b', 'c', 'a'],
        'sortBy',
      );
      t.same(
        (await store.find('items', {}, { sortBy: 'n', limit: 2 })).map((d) => d.id),
        ['b', 'c'],
        'sortBy + limit',
      );
      t.same(
        (await store.find('items', { kind: 'fruit' }, { sortBy: 'n' })).map((d) => d.id),
        ['c', 'a'],
        'filter + sortBy',
      );
      t.same(
        (await store.find('ties', {}, { sortBy: 'at' })).map((d) => d.id),
        ['t1', 't2', 't3'],
        'sortBy ties broken by id, on every adapter (MongoDB sorts by _id next)',
      );
      const found = await store.find('items', { kind: 'veg' });
      t.same(found, [{ id: 'b', kind: 'veg', n: 1, note: null }], 'documents come back as stored, without adapter fields');

      t.equal(
        await store.applyBatch('p', 1, 3n, 4n, async (w) => {
          await w(4n).remove('items', 'b');
          await w(4n).remove('items', 'never-existed');
          await w(4n).put('items', { id: 'c', kind: 'fruit', n: 20 });
        }),
        true,
      );
      t.equal(await store.get('items', 'b'), null, 'removed');
      t.same(await store.get('items', 'c'), { id: 'c', kind: 'fruit', n: 20 }, 'a put replaces the whole document');
      t.same(
        (await store.find('items', {}, { sortBy: 'id' })).map((d) => d.id),
        ['a', 'c'],
      );
    });

    await withStore('the checkpoint moves with compare-and-set; a failed CAS writes nothing', async (t, { store }) => {
      t.equal(await store.getCheckpoint('p'), null, 'no checkpoint before the first batch');
      t.equal(await store.applyBatch('p', 2, -1n, 10n, async (w) => w(10n).put('items', { id: 'a', v: 1 })), true);
      t.same(await store.getCheckpoint('p'), { position: 10n, version: 2 });
      t.equal(typeof (await store.getCheckpoint('p'))?.position, 'bigint');
      t.equal(await store.getCheckpoint('other'), null, 'checkpoints are per projection');

      t.equal(
        await store.applyBatch('p', 2, -1n, 11n, async (w) => w(11n).put('items', { id: 'stale', v: 1 })),
        false,
        'from -1n when a checkpoint exists',
      );
      t.equal(
        await store.applyBatch('p', 2, 9n, 11n, async (w) => w(11n).put('items', { id: 'stale', v: 2 })),
        false,
        'from a position that is not the checkpoint',
      );
      t.equal(await store.get('items', 'stale'), null, 'the failed batches wrote nothing');
      t.same(await store.get('items', 'a'), { id: 'a', v: 1 });
      t.same(await store.getCheckpoint('p'), { position: 10n, version: 2 }, 'the checkpoint did not move');

      // Global positions are signed 64-bit in every backend (EventStoreDB log positions are `long`).
      const beyondDouble = 2n ** 53n + 1n;
      const maxPosition = 2n ** 63n - 1n;
      t.equal(await store.applyBatch('p', 3, 10n, beyondDouble, async () => {}), true, 'an empty batch moves the checkpoint');
      t.same(await store.getCheckpoint('p'), { position: beyondDouble, version: 3 }, 'a position past 2^53 stays exact');
      t.equal(
        await store.applyBatch('p', 3, beyondDouble, maxPosition, async (w) => w(maxPosition).put('items', { id: 'max', v: 1 })),
        true,
      );
      t.same(await store.getCheckpoint('p'), { position: maxPosition, version: 3 }, 'so does 2^63 - 1');
      t.same(await store.get('items', 'max'), { id: 'max', v: 1 });

      await t.rejects(
        store.applyBatch('p', 3, maxPosition, maxPosition, async () => {
          throw new Error('projection failed');
        }),
        /projection failed/,
        'an error in the projection rejects',
      );
      t.same(await store.getCheckpoint('p'), { position: maxPosition, version: 3 }, 'and leaves the checkpoint');
      await t.rejects(
        store.applyBatch('p', 3, maxPosition, maxPosition, async (w) => {
          await w(maxPosition).put('items', { id: 'half', v: 1 });
          await w(maxPosition).remove('items', 'a');
          throw new Error('projection failed halfway');
        }),
        /projection failed halfway/,
      );
      t.equal(await store.get('items', 'half'), null, 'a batch that throws after writing writes nothing');
      t.same(await store.get('items', 'a'), { id: 'a', v: 1 }, 'nor removes anything');

      // Another runner moves the checkpoint while this batch is being applied (outside its callback,
      // which a store may run more than once: MongoDB retries a transaction after a conflict).
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      let resume!: () => void;
      const proceed = new Promise<void>((resolve) => (resume = resolve));
      const loser = store.applyBatch('s', 1, -1n, 5n, async (w) => {
        await w(5n).put('items', { id: 'loser', v: 1 });
        entered();
        await proceed;
      });
      await inside;
      t.equal(await store.applyBatch('s', 1, -1n, 5n, async (w) => w(5n).put('items', { id: 'winner', v: 1 })), true, 'the other runner wins');
      resume();
      t.equal(await loser, false, 'the batch that finds its checkpoint moved at the end is not applied');
      t.equal(await store.get('items', 'loser'), null, 'and writes nothing');
      t.same(await store.get('items', 'winner'), { id: 'winner', v: 1 });

      const racers = await Promise.all(
        [1, 2, 3].map(() =>
          store.applyBatch('q', 1, -1n, 30n, async (w) => {
            await w(30n).put('raced', { id: 'r', v: 30 });
          }),
        ),
      );
      t.equal(racers.filter(Boolean).length, 1, 'of concurrent batches from the same checkpoint exactly one wins');
      t.same(await store.getCheckpoint('q'), { position: 30n, version: 1 });
      t.same(await store.find('raced', {}), [{ id: 'r', v: 30 }]);
    });

    await withStore('the position guard ignores writes from an earlier or the same event', async (t, { store }) => {
      let checkpoint = -1n;
      const batch = async (to: bigint, apply: (w: (p: bigint) => ProjectionWriter) => Promise<void>) => {
        t.equal(await store.applyBatch('guard', 1, checkpoint, to, apply), true);
        checkpoint = to;
      };
      await batch(10n, (w) => w(10n).put('docs', { id: 'd', v: 'ten' }));
      await batch(11n, (w) => w(5n).put('docs', { id: 'd', v: 'five' }));
      t.same(await store.get('docs', 'd'), { id: 'd', v: 'ten' }, 'a lower position is ignored');
      await batch(12n, (w) => w(10n).put('docs', { id: 'd', v: 'ten again' }));
      t.same(await store.get('docs', 'd'), { id: 'd', v: 'ten' }, 'an equal position is ignored');
      await batch(13n, (w) => w(10n).remove('docs', 'd'));
      t.same(await store.get('docs', 'd'), { id: 'd', v: 'ten' }, 'a remove at an equal position is ignored');
      await batch(14n, (w) => w(9n).remove('docs', 'd'));
      t.same(await store.get('docs', 'd'), { id: 'd', v: 'ten' }, 'a remove at a lower position is ignored');
      await batch(15n, (w) => w(11n).put('docs', { id: 'd', v: 'eleven' }));
      t.same(await store.get('docs', 'd'), { id: 'd', v: 'eleven' }, 'a higher position applies');
      await batch(16n, (w) => w(100_000_000_000n).put('docs', { id: 'd', v: 'big' }));
      await batch(17n, (w) => w(99_999_999_999n).put('docs', { id: 'd', v: 'smaller but longer-looking?' }));
      t.same(await store.get('docs', 'd'), { id: 'd', v: 'big' }, 'positions compare as numbers, not as text');
      await batch(18n, (w) => w(100_000_000_001n).remove('docs', 'd'));
      t.equal(await store.get('docs', 'd'), null, 'a remove at a higher position applies');
    });

    await withStore('applying the same batch of events twice yields identical documents', async (t, { store }) => {
      const last = HISTORY.at(-1)!.position;
      t.equal(await store.applyBatch('items', 1, -1n, last, applyAll(HISTORY)), true);
      const once = {
        items: await store.find('items', {}, { sortBy: 'id' }),
        notes: await store.find('notes', {}, { sortBy: 'id' }),
      };
      t.same(
        once.items.map((d) => [d.id, d.name, d.count]),
        [
          ['a', 'apricot', 3],
          ['c', 'cherry', 1],
        ],
        'the projection ran as expected',
      );
      t.same(once.notes, [{ id: 'n1', text: 'hello', itemCount: 2 }]);

      t.equal(await store.applyBatch('items', 1, last, last, applyAll(HISTORY)), true, 'replay of the same batch');
      t.same(
        {
          items: await store.find('items', {}, { sortBy: 'id' }),
          notes: await store.find('notes', {}, { sortBy: 'id' }),
        },
        once,
        'identical after the replay',
      );

      // A crash after the documents were written but before the checkpoint moved: replay from the old checkpoint.
      const middle = HISTORY[4]!.position;
      await store.reset('items', ['items', 'notes']);
      t.equal(await store.applyBatch('items', 1, -1n, middle, applyAll(HISTORY.slice(0, 5))), true);
      t.equal(await store.applyBatch('items', 1, middle, middle, applyAll(HISTORY.slice(5))), true, 'documents written ahead of the checkpoint');
      t.equal(await store.applyBatch('items', 1, middle, last, applyAll(HISTORY.slice(5))), true, 'the replay from the checkpoint');
      t.same(
        {
          items: await store.find('items', {}, { sortBy: 'id' }),
          notes: await store.find('notes', {}, { sortBy: 'id' }),
        },
        once,
        'identical after a partial replay',
      );
    });

    await withStore('reset empties the collections and the checkpoint', async (t, { store }) => {
      await store.applyBatch('r', 1, -1n, 2n, async (w) => {
        await w(1n).put('ra', { id: '1' });
        await w(2n).put('rb', { id: '2' });
        await w(2n).put('kept', { id: '3' });
      });
      await store.applyBatch('other', 1, -1n, 7n, async () => {});
      await store.reset('r', ['ra', 'rb']);
      t.same(await store.find('ra', {}), []);
      t.equal(await store.get('rb', '2'), null);
      t.equal(await store.getCheckpoint('r'), null);
      t.same(await store.get('kept', '3'), { id: '3' }, 'other collections stay');
      t.same(await store.getCheckpoint('other'), { position: 7n, version: 1 }, 'other checkpoints stay');
      t.equal(
        await store.applyBatch('r', 2, -1n, 1n, async (w) => w(1n).put('ra', { id: '1', again: true })),
        true,
        'a rebuild starts from -1n',
      );
      t.same(await store.get('ra', '1'), { id: '1', again: true }, 'and its writes are not blocked by old positions');
    });

    const pageCase = async (t: Test, { store }: ReadModelStoreUnderTest) => {
      // 30 conversations on two sites, several sharing a creation time, booleans, nulls and a missing field.
      const docs = Array.from({ length: 30 }, (_, i) => ({
        id: `c${String(i).padStart(2, '0')}`,
        siteId: i % 3 === 0 ? 'other' : 'site',
        createdAt: `2024-01-01T00:00:${String(Math.floor(i / 2)).padStart(2, '0')}.000Z`,
        aiPaused: i % 2 === 0,
        status: i % 5 === 0 ? 'resolved' : 'open',
        owner: i % 4 === 0 ? null : 'agent',
        ...(i % 7 === 0 ? {} : { unread: i % 3 === 1 }),
        n: i,
      }));
      await store.applyBatch('p', 1, -1n, 1n, async (w) => {
        for (const doc of docs) await w(1n).put('conversations', doc);
      });
      const key = (d: { createdAt: string; id: string }) => `${d.createdAt}|${d.id}`;
      const expected = (pred: (d: (typeof docs)[number]) => boolean, desc = true) =>
        docs
          .filter(pred)
          .sort((a, b) => (key(a) < key(b) ? -1 : 1) * (desc ? -1 : 1))
          .map((d) => d.id);
      const walk = async (query: Omit<Parameters<ReadModelStore['page']>[1], 'after' | 'limit'>, limit: number) => {
        const ids: string[] = [];
        let after: { value: string; id: string } | null = null;
        for (let guard = 0; guard < 50; guard++) {
          const page: Array<Document & { createdAt: string }> = await store.page('conversations', { ...query, after, limit });
          t.ok(page.length <= limit, 'never more than the limit');
          ids.push(...page.map((d) => d.id));
          if (page.length < limit) return ids;
          const last = page.at(-1)!;
          after = { value: last.createdAt, id: last.id };
        }
        throw new Error('did not end');
      };
      const site = (d: (typeof docs)[number]) => d.siteId === 'site';
      t.same(await walk({ filter: { siteId: 'site' }, orderBy: 'createdAt', direction: 'desc' }, 4), expected(site), 'newest first, ties by id');
      t.same(await walk({ filter: { siteId: 'site' }, orderBy: 'createdAt', direction: 'asc' }, 3), expected(site, false), 'oldest first');
      t.same(await walk({ filter: { siteId: 'site', aiPaused: true }, orderBy: 'createdAt', direction: 'desc' }, 2), expected((d) => site(d) && d.aiPaused), 'boolean filter');
      t.same(await walk({ filter: { siteId: 'site', owner: null }, orderBy: 'createdAt', direction: 'desc' }, 2), expected((d) => site(d) && d.owner === null), 'null filter');
      t.same(
        await walk({ filter: { siteId: 'site', unread: false }, orderBy: 'createdAt', direction: 'desc' }, 2),
        expected((d) => site(d) && 'unread' in d && d.unread === false),
        'a missing field does not equal false',
      );
      t.same(
        await walk({ filter: { siteId: 'site', status: 'open' }, ranges: { createdAt: { gt: '2024-01-01T00:00:03.000Z', lt: '2024-01-01T00:00:11.000Z' } }, orderBy: 'createdAt', direction: 'desc' }, 3),
        expected((d) => site(d) && d.status === 'open' && d.createdAt > '2024-01-01T00:00:03.000Z' && d.createdAt < '2024-01-01T00:00:11.000Z'),
        'exclusive ranges',
      );
      t.same(
        await walk({ filter: { siteId: 'site' }, ranges: { n: { gt: 20 } }, orderBy: 'createdAt', direction: 'desc' }, 5),
        expected((d) => site(d) && d.n > 20),
        'numeric range on another field',
      );
      t.same(await store.page('conversations', { filter: { siteId: 'site' }, orderBy: 'createdAt', direction: 'desc', limit: 0 }), [], 'limit 0');
      t.same(await store.page('nothing', { filter: { siteId: 'site' }, orderBy: 'createdAt', direction: 'desc', limit: 5 }), [], 'unknown collection');
      const first = await store.page('conversations', { filter: { siteId: 'site' }, orderBy: 'createdAt', direction: 'desc', limit: 1 });
      t.same(first[0], docs.find((d) => d.id === expected(site)[0]), 'whole documents come back');

      // New documents arriving between pages (newer and older than the cursor) never shift the walk.
      const seen: string[] = [];
      let after: { value: string; id: string } | null = null;
      for (let round = 0; round < 30; round++) {
        const page: Array<Document & { createdAt: string }> = await store.page('conversations', { filter: { siteId: 'site' }, orderBy: 'createdAt', direction: 'desc', after, limit: 3 });
        seen.push(...page.map((d) => d.id));
        if (page.length < 3) break;
        after = { value: page.at(-1)!.createdAt, id: page.at(-1)!.id };
        await store.applyBatch('p', 1, BigInt(round + 1), BigInt(round + 2), async (w) => {
          await w(BigInt(round + 2)).put('conversations', { id: `new${round}`, siteId: 'site', createdAt: `2024-01-02T00:00:${String(round).padStart(2, '0')}.000Z` });
        });
      }
      t.same(seen, expected(site), 'exactly the documents there when the walk began, once each, in order');
    };
    await withStore('page: keyset pages by a field then id, with equality filters, ranges and a cursor (no declared index)', pageCase);
    await withStore('page: the same pages walking declared indexes', pageCase, PAGE_INDEXES);
    await withStore('declared indexes: a store reopened with other declarations pages the same documents', async (t, h) => {
      await h.store.applyBatch('p', 1, -1n, 1n, async (w) => {
        for (let i = 0; i < 12; i++) await w(1n).put('conversations', { id: `c${i}`, siteId: 's', status: i % 2 ? 'open' : 'resolved', createdAt: `2024-01-01T00:00:${String(i).padStart(2, '0')}.000Z` });
      });
      const query = { filter: { siteId: 's', status: 'open' }, orderBy: 'createdAt', direction: 'desc' as const, limit: 4 };
      const before = (await h.store.page('conversations', query)).map((d) => d.id);
      t.same(before, ['c11', 'c9', 'c7', 'c5']);
      if (!h.reopen) return;
      await h.store.close();
      const fewer = await h.reopen({ conversations: [['siteId', 'createdAt']] });
      t.same((await fewer.page('conversations', query)).map((d) => d.id), before, 'an index dropped: the same page');
      await fewer.close();
      const none = await h.reopen();
      t.same((await none.page('conversations', query)).map((d) => d.id), before, 'no declarations: the same page');
    }, PAGE_INDEXES);

    await withStore('beginRebuild: readers see the old documents until commit switches all of them in at once', async (t, h) => {
      const { store } = h;
      await store.applyBatch('rb', 1, -1n, 10n, async (w) => {
        await w(5n).put('rbItems', { id: 'old1', v: 'old' });
        await w(6n).put('rbItems', { id: 'old2', v: 'old' });
        await w(7n).put('rbNotes', { id: 'note', v: 'old' });
        await w(8n).put('rbOther', { id: 'x', v: 'kept' });
      });
      const old = await store.find('rbItems', {}, { sortBy: 'id' });
      const rebuild = await store.beginRebuild('rb', ['rbItems', 'rbNotes']);
      const batches = [0, 1, 2].map((b) => Array.from({ length: 4 }, (_, i) => ({ doc: { id: `new${b}${i}`, v: 'new', n: b * 4 + i }, position: BigInt(20 + b * 4 + i) })));
      for (const batch of batches) {
        await rebuild.write('rbItems', batch);
        t.same(await store.find('rbItems', {}, { sortBy: 'id' }), old, 'a reader between batches sees exactly the old documents');
        t.same(await store.getCheckpoint('rb'), { position: 10n, version: 1 }, 'and the old checkpoint');
      }
      if (h.reopen) {
        const other = await h.reopen();
        t.same(await other.find('rbItems', {}, { sortBy: 'id' }), old, 'so does another process before the commit');
        await other.close();
      }
      await rebuild.commit(2, 31n);
      const all = batches.flat().map((e) => e.doc);
      t.same(await store.find('rbItems', {}, { sortBy: 'n' }), all, 'after the commit exactly the new documents');
      t.same(await store.find('rbNotes', {}), [], 'a collection the rebuild wrote nothing to is emptied');
      t.same(await store.get('rbOther', 'x'), { id: 'x', v: 'kept' }, 'collections of other projections stay');
      t.same(await store.getCheckpoint('rb'), { position: 31n, version: 2 }, 'the checkpoint moved with the switch');
      t.same(
        await store.page('rbItems', { filter: { v: 'new' }, orderBy: 'n', direction: 'desc', limit: 2 }),
        [all[11], all[10]],
        'pages see the new documents',
      );
      t.equal(
        await store.applyBatch('rb', 2, 31n, 32n, async (w) => w(24n).put('rbItems', { id: 'new11', v: 'stale' })),
        true,
      );
      t.same(await store.get('rbItems', 'new11'), all[5], 'rebuilt documents keep their positions: the guard holds');
      if (h.reopen) {
        const other = await h.reopen();
        t.same(await other.find('rbItems', {}, { sortBy: 'n' }), all, 'and another process sees them after the commit');
        t.same(await other.getCheckpoint('rb'), { position: 32n, version: 2 });
        await other.close();
      }
    });

    await withStore('beginRebuild: abort leaves the live documents and checkpoint as they were; a new rebuild starts clean', async (t, { store }) => {
      await store.applyBatch('ab', 1, -1n, 3n, async (w) => w(3n).put('abItems', { id: 'live' }));
      const first = await store.beginRebuild('ab', ['abItems']);
      await first.write('abItems', [{ doc: { id: 'half' }, position: 9n }]);
      await first.abort();
      t.same(await store.find('abItems', {}), [{ id: 'live' }]);
      t.same(await store.getCheckpoint('ab'), { position: 3n, version: 1 });
      const second = await store.beginRebuild('ab', ['abItems']);
      await second.write('abItems', [{ doc: { id: 'whole' }, position: 9n }]);
      await second.commit(1, 9n);
      t.same(await store.find('abItems', {}), [{ id: 'whole' }], 'nothing of the aborted rebuild survives');
      await t.rejects(second.write('abItems', []), 'a committed rebuild takes no more writes');
      const third = await store.beginRebuild('ab', ['abItems']);
      await t.rejects(third.write('notOwned', [{ doc: { id: 'z' }, position: 1n }]), 'a collection the projection does not own is refused');
      await third.abort();
    });

    await withStore('ping answers; applyBatches, where present, commits each batch as applyBatch would, leaving out a refused or failing one', async (t, { store }) => {
      await store.ping();
      t.pass('ping resolved');
      if (!store.applyBatches) return void t.pass('this adapter has no applyBatches (callers use applyBatch per projection)');
      t.equal(await store.applyBatch('q2', 1, -1n, 5n, async (w) => w(5n).put('items', { id: 'q2-old', n: 0 })), true);
      const error = new Error('the projection failed');
      const applied = store.applyBatches([
        { projection: 'q1', version: 1, from: -1n, to: 10n, apply: async (w) => w(10n).put('items', { id: 'q1', n: 1 }) },
        { projection: 'q2', version: 1, from: -1n, to: 10n, apply: async (w) => w(10n).put('items', { id: 'q2-stale', n: 2 }) },
        {
          projection: 'q3',
          version: 1,
          from: -1n,
          to: 10n,
          apply: async (w) => {
            await w(10n).put('items', { id: 'q3', n: 3 });
            throw error;
          },
        },
      ]);
      await t.rejects(applied, error, 'the first error is thrown once the others are committed');
      t.same(await store.get('items', 'q1'), { id: 'q1', n: 1 }, 'the good batch is committed');
      t.same(await store.getCheckpoint('q1'), { position: 10n, version: 1 });
      t.equal(await store.get('items', 'q2-stale'), null, 'a batch whose checkpoint moved writes nothing');
      t.same(await store.getCheckpoint('q2'), { position: 5n, version: 1 });
      t.equal(await store.get('items', 'q3'), null, 'the failing batch writes nothing');
      t.equal(await store.getCheckpoint('q3'), null);
      t.same(
        await store.applyBatches([
          { projection: 'q1', version: 1, from: 10n, to: 11n, apply: async (w) => w(11n).remove('items', 'q1') },
          { projection: 'q2', version: 1, from: 5n, to: 11n, apply: async () => {} },
        ]),
        [true, true],
        'each applied: true',
      );
      t.equal(await store.get('items', 'q1'), null);
    });

    await withStore('documents and checkpoints survive close and reopen', async (t, h) => {
      if (!h.reopen) {
        t.skip('this adapter cannot be reopened', () => {});
        return;
      }
      await h.store.applyBatch('p', 4, -1n, 42n, async (w) => {
        await w(40n).put('items', { id: 'a', n: 1, nested: { list: [1, 2] } });
        await w(42n).put('items', { id: 'b', n: 2 });
      });
      await h.store.close();
      const store = await h.reopen();
      t.teardown(() => store.close());
      t.same(await store.getCheckpoint('p'), { position: 42n, version: 4 });
      t.same(await store.get('items', 'a'), { id: 'a', n: 1, nested: { list: [1, 2] } });
      t.same(
        (await store.find('items', {}, { sortBy: 'n' })).map((d) => d.id),
        ['a', 'b'],
      );
      t.equal(
        await store.applyBatch('p', 4, 42n, 43n, async (w) => w(41n).put('items', { id: 'b', n: 99 })),
        true,
      );
      t.same(await store.get('items', 'b'), { id: 'b', n: 2 }, 'the position guard survives the restart too');
    });
  });
}
