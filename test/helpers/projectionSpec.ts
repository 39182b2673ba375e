import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { SqliteReadModelStore } from '../../src/adapters/sqlite/sqliteReadModelStore.ts';
import type { RecordedEvent } from '../../src/ports/eventStore.ts';
import type { Projection } from '../../src/projections/projection.ts';

/**
 * Events → documents: runs one projection over the given events in a real SQLite read-model store,
 * as the projection runner does (one batch from the start of the log to its last event).
 * `replay` applies the whole history again on top of the stored checkpoint, each event twice,
 * so a spec can check that the documents do not change.
 */
export async function projectEvents(t: Test, projection: Projection, events: ReadonlyArray<{ type: string; data: unknown }>) {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-projection-spec-'));
  const store = new SqliteReadModelStore(join(dir, 'readModels.sqlite'));
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const recorded: RecordedEvent[] = events.map((e, i) => ({
    id: `event-${i}`,
    streamId: 'projection-spec',
    revision: BigInt(i),
    position: BigInt(i),
    type: e.type,
    data: e.data,
    metadata: {},
    createdAt: new Date(0),
  }));
  const last = BigInt(recorded.length - 1);
  const apply = (from: bigint, times: number) =>
    store.applyBatch(projection.name, projection.version, from, last, async (writerAt) => {
      for (const e of recorded) {
        if (!projection.canHandle(e.type)) continue;
        for (let i = 0; i < times; i++) await projection.handle(e, writerAt(e.position));
      }
    });
  if (!(await apply(-1n, 1))) throw new Error(`${projection.name}: the first batch was refused`);

  /** Every document of every collection the projection owns, by collection, in id order. */
  const documents = async () => {
    const out: Record<string, unknown[]> = {};
    for (const c of projection.collections) out[c] = await store.find(c, {}, { sortBy: 'id' });
    return out;
  };
  const replay = () => apply(last, 2);
  return { store, documents, replay };
}
