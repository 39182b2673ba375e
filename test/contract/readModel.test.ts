import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteReadModelStore } from '../../src/adapters/sqlite/sqliteReadModelStore.ts';
import type { ReadModelStore } from '../../src/ports/readModelStore.ts';
import { readModelContract } from './readModelContract.ts';
import { closer } from './closer.ts';

await readModelContract(t, 'SqliteReadModelStore', async (indexes) => {
  const dir = mkdtempSync(join(tmpdir(), 'readmodel-contract-'));
  const file = join(dir, 'readmodels.sqlite');
  const stores = closer<ReadModelStore>();
  return {
    store: stores.track(new SqliteReadModelStore(file, indexes)),
    reopen: async (again) => stores.track(new SqliteReadModelStore(file, again)),
    async cleanup() {
      await stores.closeAll();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

const url = process.env.MONGODB_URL;
if (url) {
  const { MongoClient } = await import('mongodb');
  const { MongoReadModelStore } = await import('../../src/adapters/mongodb/mongoReadModelStore.ts');
  const run = randomUUID().slice(0, 8);
  let counter = 0;
  await readModelContract(t, 'MongoReadModelStore', async (indexes) => {
    const dbName = `rm_contract_${run}_${(counter += 1)}`;
    const stores = closer<ReadModelStore>();
    return {
      store: stores.track(await MongoReadModelStore.connect(url, dbName, indexes)),
      reopen: async (again) => stores.track(await MongoReadModelStore.connect(url, dbName, again)),
      async cleanup() {
        await stores.closeAll();
        const admin = new MongoClient(url);
        try {
          await admin.db(dbName).dropDatabase();
        } finally {
          await admin.close();
        }
      },
    };
  });

  t.test('MongoReadModelStore: the declared lookups are indexed, also after a rebuild replaced the collection', async (t) => {
    const dbName = `rm_contract_${run}_lookups`;
    const store = await MongoReadModelStore.connect(url, dbName, {}, { things: [['siteId'], ['teamId', 'revoked']] });
    const admin = new MongoClient(url);
    t.teardown(async () => {
      await store.close();
      await admin.db(dbName).dropDatabase();
      await admin.close();
    });
    const names = async () => (await admin.db(dbName).collection('rm_things').listIndexes().toArray()).map((index) => String(index.name)).sort();
    t.same(await names(), ['_id_', 'lookup__siteId', 'lookup__teamId__revoked']);
    const rebuild = await store.beginRebuild('things', ['things']);
    await rebuild.write('things', [{ doc: { id: 'a', siteId: 's1', teamId: 't1', revoked: false }, position: 1n }]);
    await rebuild.commit(1, 1n);
    t.same(await names(), ['_id_', 'lookup__siteId', 'lookup__teamId__revoked']);
    t.same(await store.find('things', { siteId: 's1' }), [{ id: 'a', siteId: 's1', teamId: 't1', revoked: false }]);
  });
} else {
  t.skip('MongoReadModelStore: set MONGODB_URL (e.g. mongodb://localhost:27017) to run the contract against MongoDB', () => {});
}

t.test('MongoReadModelStore: a rebuild drops only the shadows no running rebuild owns (runs without a server)', async (t) => {
  const { isStaleShadow } = await import('../../src/adapters/mongodb/mongoReadModelStore.ts');
  const now = Date.UTC(2026, 10, 26);
  const hour = 3_600_000;
  t.equal(isStaleShadow(`rm_items__rebuild_${now - hour}_0a1b2c3d`, 'items', now), false, "another node's rebuild of an hour ago is left alone");
  t.equal(isStaleShadow(`rm_items__rebuild_${now - 25 * hour}_0a1b2c3d`, 'items', now), true, 'a day-old leftover is dropped');
  t.equal(isStaleShadow('rm_items__rebuild', 'items', now), true, 'the one shared shadow of older builds');
  t.equal(isStaleShadow(`rm_itemsX__rebuild_${now - 25 * hour}_0a1b2c3d`, 'items', now), false, "another collection's shadow");
  t.equal(isStaleShadow('rm_items', 'items', now), false, 'the live collection');
  t.equal(isStaleShadow(`rm_items__rebuild_${now - 25 * hour}_0a1b2c3d_x`, 'items', now), false);
});
