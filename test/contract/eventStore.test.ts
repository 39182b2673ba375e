import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import type { EventStore } from '../../src/ports/eventStore.ts';
import { eventStoreContract } from './eventStoreContract.ts';
import { closer } from './closer.ts';

await eventStoreContract(t, 'SqliteEventStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eventstore-contract-'));
  const file = join(dir, 'events.sqlite');
  const stores = closer<EventStore>();
  return {
    store: stores.track(new SqliteEventStore(file)),
    file,
    reopen: async () => stores.track(new SqliteEventStore(file)),
    async cleanup() {
      await stores.closeAll();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// The same contract on a store whose appends go to another store's writer thread, as the
// background roles' thread of `npm start` appends (SqliteEventStore.shareWriter).
await eventStoreContract(t, 'SqliteEventStore through a shared writer', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eventstore-contract-shared-'));
  const file = join(dir, 'events.sqlite');
  const stores = closer<EventStore>();
  const owner = new SqliteEventStore(file);
  const sharing = () => stores.track(new SqliteEventStore(file, { writer: owner.shareWriter() }));
  return {
    store: sharing(),
    file,
    reopen: async () => sharing(),
    async cleanup() {
      await stores.closeAll();
      await owner.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

const url = process.env.EVENTSTORE_URL;
if (url) {
  const { EsdbEventStore } = await import('../../src/adapters/eventstoredb/esdbEventStore.ts');
  await eventStoreContract(t, 'EsdbEventStore', async () => {
    const stores = closer<EventStore>();
    return {
      store: stores.track(new EsdbEventStore(url)),
      reopen: async () => stores.track(new EsdbEventStore(url)),
      cleanup: () => stores.closeAll(),
    };
  });
} else {
  t.skip('EsdbEventStore: set EVENTSTORE_URL (e.g. esdb://localhost:2113?tls=false) to run the contract against EventStoreDB', () => {});
}
