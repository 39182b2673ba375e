import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { SqliteReadModelStore } from '../../src/adapters/sqlite/sqliteReadModelStore.ts';

/**
 * A store that follows a read-model file another connection writes (an API node with
 * RUN_PROJECTIONS=false) catches up on a moved checkpoint by reading what was written since, not the
 * whole file: it must then hold exactly what the writer holds, removals and rebuilds included.
 */
const dir = mkdtempSync(join(tmpdir(), 'catch-up-'));
const file = join(dir, 'readmodels.sqlite');
const writer = new SqliteReadModelStore(file);
t.teardown(async () => {
  await writer.close();
  rmSync(dir, { recursive: true, force: true });
});

type Change = [collection: string, id: string, position: bigint, n: number | null];
/** One batch of `projection` from `from` to `to`: a put of `{ id, n }` or, with n null, a removal. */
async function batch(projection: string, version: number, from: bigint, to: bigint, changes: Change[]) {
  t.ok(
    await writer.applyBatch(projection, version, from, to, async (at) => {
      for (const [collection, id, position, n] of changes) {
        if (n === null) await at(position).remove(collection, id);
        else await at(position).put(collection, { id, n });
      }
    }),
  );
}

async function same(t: Test, follower: SqliteReadModelStore, what: string) {
  for (const collection of ['alpha', 'beta']) {
    t.same(await follower.find(collection, {}, { sortBy: 'id' }), await writer.find(collection, {}, { sortBy: 'id' }), `${what}: ${collection}`);
  }
  for (const projection of ['p1', 'p2']) t.same(await follower.getCheckpoint(projection), await writer.getCheckpoint(projection), `${what}: checkpoint ${projection}`);
}

t.test('puts of two projections at interleaved positions, a removal, a removal with an add, a rebuild', async (t) => {
  await batch('p1', 1, -1n, 10n, [['alpha', 'a1', 5n, 1], ['alpha', 'a2', 10n, 1]]);
  await batch('p2', 1, -1n, 3n, [['beta', 'b1', 3n, 1]]);
  const follower = new SqliteReadModelStore(file);
  t.teardown(() => follower.close());
  await same(t, follower, 'loaded');

  // p2 moves to positions below p1's checkpoint; p1 changes a document it had.
  await batch('p2', 1, 3n, 8n, [['beta', 'b2', 6n, 1], ['beta', 'b1', 8n, null]]);
  await batch('p1', 1, 10n, 20n, [['alpha', 'a3', 20n, 1], ['alpha', 'a1', 15n, 2]]);
  t.same(await follower.get('alpha', 'a1'), { id: 'a1', n: 1 }, 'not caught up before a checkpoint is read');
  await follower.getCheckpoint('p1');
  await same(t, follower, 'after puts and a removal');

  // A removal and an add in one batch: the collection's size does not change.
  await batch('p2', 1, 8n, 9n, [['beta', 'b2', 9n, null], ['beta', 'b3', 9n, 1]]);
  await follower.getCheckpoint('p2');
  await same(t, follower, 'after a removal with an add');

  // A rebuild at a new version writes its documents at their old positions.
  const rebuild = await writer.beginRebuild('p1', ['alpha']);
  await rebuild.write('alpha', [{ doc: { id: 'a9', n: 9 }, position: 2n }]);
  await rebuild.commit(2, 20n);
  await follower.getCheckpoint('p1');
  await same(t, follower, 'after a rebuild');
  t.same(await follower.find('alpha', {}), [{ id: 'a9', n: 9 }]);
});

t.test('a rebuild at the same version and checkpoint (the CLI, while a server is at the head) is seen', async (t) => {
  await batch('p2', 1, 9n, 30n, [['beta', 'b4', 30n, 1]]);
  const follower = new SqliteReadModelStore(file);
  t.teardown(() => follower.close());
  await same(t, follower, 'loaded');
  const checkpoint = (await writer.getCheckpoint('p2'))!;

  // What the rebuild writes differs from what the follower holds (a document that had gone wrong).
  const rebuild = await writer.beginRebuild('p2', ['beta']);
  await rebuild.write('beta', [{ doc: { id: 'b3', n: 30 }, position: 9n }, { doc: { id: 'b4', n: 40 }, position: 30n }]);
  await rebuild.commit(checkpoint.version, checkpoint.position);
  t.same(await writer.getCheckpoint('p2'), checkpoint, 'the checkpoint did not move');
  t.same(await follower.getCheckpoint('p2'), checkpoint);
  await same(t, follower, 'after the rebuild');
  t.same(await follower.get('beta', 'b3'), { id: 'b3', n: 30 });

  // The writer's own cache holds what it switched in: its next batch needs no reload.
  const alpha = writer.collectionVersion('alpha');
  await batch('p2', 1, 30n, 31n, [['beta', 'b5', 31n, 1]]);
  t.equal(writer.collectionVersion('alpha'), alpha, 'the writer did not reload');
});

t.test('reload reads what changed since, not every collection', async (t) => {
  const follower = new SqliteReadModelStore(file);
  t.teardown(() => follower.close());
  const alpha = follower.collectionVersion('alpha');
  const beta = follower.collectionVersion('beta');
  await batch('p2', 1, 31n, 40n, [['beta', 'b6', 40n, 1]]);
  follower.reload();
  await same(t, follower, 'after reload');
  t.equal(follower.collectionVersion('alpha'), alpha, 'alpha was not read again');
  t.not(follower.collectionVersion('beta'), beta, 'beta was');

  // After another connection's rebuild, everything is read again.
  const rebuild = await writer.beginRebuild('p1', ['alpha']);
  await rebuild.write('alpha', [{ doc: { id: 'a9', n: 10 }, position: 2n }]);
  await rebuild.commit(2, 20n);
  follower.reload();
  await same(t, follower, 'after a rebuild and reload');
  t.not(follower.collectionVersion('alpha'), alpha);
});

t.test('a batch is staged on what a rebuild at the same checkpoint switched in, also when it comes while staging', async (t) => {
  // The server's store at the head (10) and the CLI's on another file of the same directory.
  const other = join(dir, 'same-checkpoint.sqlite');
  const server = new SqliteReadModelStore(other);
  t.teardown(() => server.close());
  // The document "had gone wrong": n=1 where the events give n=5.
  t.ok(await server.applyBatch('p', 1, -1n, 10n, async (at) => at(10n).put('c', { id: 'x', n: 1 })));
  const cli = new SqliteReadModelStore(other);
  t.teardown(() => cli.close());
  const rebuildTo = async (n: number, position: bigint) => {
    const r = await cli.beginRebuild('p', ['c']);
    await r.write('c', [{ doc: { id: 'x', n }, position }]);
    await r.commit(1, position);
  };
  const increment = (position: bigint, during?: () => Promise<void>) =>
    server.applyBatch('p', 1, position - 1n, position, async (at) => {
      const w = at(position);
      const doc = (await w.get<{ id: string; n: number }>('c', 'x'))!;
      await during?.();
      await w.put('c', { id: 'x', n: doc.n + 1 });
    });

  await rebuildTo(5, 10n);
  // The next event, before the server's runner looks at its checkpoints (it does so when idle).
  t.ok(await increment(11n), 'applied');
  const fresh = () => new SqliteReadModelStore(other);
  const file1 = fresh();
  t.same(await file1.get('c', 'x'), { id: 'x', n: 6 }, 'the increment applies to the rebuilt document');
  await file1.close();
  t.same(await server.get('c', 'x'), { id: 'x', n: 6 });

  // A rebuild switched in while the batch is staged: the batch is refused, and staged again on it.
  t.notOk(await increment(12n, () => rebuildTo(50, 11n)), 'refused');
  t.same(await server.get('c', 'x'), { id: 'x', n: 50 }, 'the server holds what the rebuild switched in');
  t.ok(await increment(12n), 'applied the second time');
  const file2 = fresh();
  t.same(await file2.get('c', 'x'), { id: 'x', n: 51 });
  await file2.close();
});

t.test('a reset, then the same version folded again, is read again whole', async (t) => {
  const other = join(dir, 'reset.sqlite');
  const worker = new SqliteReadModelStore(other);
  const follower = new SqliteReadModelStore(other);
  t.teardown(async () => {
    await worker.close();
    await follower.close();
  });
  t.ok(await worker.applyBatch('w', 1, -1n, 20n, async (at) => {
    await at(3n).put('k', { id: 'k1', v: 1 });
    await at(4n).put('k', { id: 'k2', v: 1 });
  }));
  await follower.getCheckpoint('w');
  await worker.reset('w', ['k']);
  t.ok(await worker.applyBatch('w', 1, -1n, 20n, async (at) => {
    await at(3n).put('k', { id: 'k1', v: 2 });
    await at(5n).put('k', { id: 'k3', v: 2 });
  }));
  follower.reload();
  t.same(await follower.find('k', {}, { sortBy: 'id' }), [{ id: 'k1', v: 2 }, { id: 'k3', v: 2 }]);
});
