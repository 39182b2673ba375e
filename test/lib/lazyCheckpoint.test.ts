import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteReadModelStore } from '../../src/adapters/sqlite/sqliteReadModelStore.ts';
import { CHECKPOINT_IDLE_STORE_MS, CHECKPOINT_STORE_EVERY_MS } from '../../src/lib/followLog.ts';
import { LazyCheckpoint } from '../../src/lib/lazyCheckpoint.ts';

/**
 * The checkpoint the log followers share (the webhook dispatcher, the departed apps, the agent runner
 * and the Outreach Agent), on a real read-model file, two connections to it standing for two copies.
 */
const dir = mkdtempSync(join(tmpdir(), 'outreach-lazy-checkpoint-'));
const file = join(dir, 'readModels.sqlite');
const store = new SqliteReadModelStore(file);
const other = new SqliteReadModelStore(file);
t.teardown(async () => {
  await store.close();
  await other.close();
  rmSync(dir, { recursive: true, force: true });
});
const storedPosition = async (name: string) => (await other.getCheckpoint(name))?.position ?? null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('pages acted on nothing in move it in memory, stored once the log is idle or the last store is old', async (t) => {
  const cp = new LazyCheckpoint(store, 'follower-a', 1);
  cp.at(-1n);
  // The first page stores: nothing was ever stored by this copy.
  t.equal(await cp.passed(10n), 'stored');
  t.equal(await storedPosition('follower-a'), 10n);
  t.equal(await cp.passed(20n), 'kept', 'the next, right after, is not stored');
  t.equal(await cp.passed(30n), 'kept');
  t.equal(cp.position, 30n);
  t.equal(cp.stored, 10n);
  t.equal(await storedPosition('follower-a'), 10n, 'the file still has the first');
  t.equal(await cp.idle(), 'kept', 'a log idle for less than CHECKPOINT_IDLE_STORE_MS: not yet');
  await sleep(CHECKPOINT_IDLE_STORE_MS + 50);
  t.equal(await cp.idle(), 'stored', 'idle long enough: stored');
  t.equal(cp.stored, 30n);
  t.equal(await storedPosition('follower-a'), 30n);
  t.equal(await cp.idle(), 'kept', 'nothing more to store');
});

t.test('a busy log stores it every CHECKPOINT_STORE_EVERY_MS', { timeout: CHECKPOINT_STORE_EVERY_MS * 4 }, async (t) => {
  const cp = new LazyCheckpoint(store, 'follower-b', 1);
  cp.at(-1n);
  // Taken before the first store, whose time the next one is counted from.
  const started = Date.now();
  t.equal(await cp.passed(1n), 'stored');
  let position = 1n;
  let storedAfter: number | null = null;
  while (storedAfter === null && Date.now() - started < CHECKPOINT_STORE_EVERY_MS * 2) {
    position++;
    if ((await cp.passed(position)) === 'stored') storedAfter = Date.now() - started;
    await sleep(20);
  }
  t.ok(storedAfter !== null, `stored again while pages kept coming (after ${storedAfter} ms)`);
  t.ok(storedAfter! >= CHECKPOINT_STORE_EVERY_MS, `not before CHECKPOINT_STORE_EVERY_MS (${storedAfter} ms)`);
  t.equal(cp.stored, position, 'where it had read');
  t.equal(await storedPosition('follower-b'), position);
});

t.test("a follower's own commit, and a store lost to another copy", async (t) => {
  const cp = new LazyCheckpoint(store, 'follower-c', 1);
  cp.at(-1n);
  // The follower writes its page's documents with the checkpoint (its own compare-and-set from `stored`).
  t.ok(await store.applyBatch('follower-c', 1, cp.stored, 5n, async () => {}));
  cp.committed(5n);
  t.equal(cp.position, 5n);
  t.equal(cp.stored, 5n);
  t.equal(await cp.passed(6n), 'kept', 'a store was just made');
  // Another copy moves the stored checkpoint meanwhile.
  t.ok(await other.applyBatch('follower-c', 1, 5n, 50n, async () => {}));
  t.equal(await cp.store(), 'lost', 'the compare-and-set from 5 fails');
  t.equal(await storedPosition('follower-c'), 50n, "the other copy's checkpoint is left as it was");
  t.equal(cp.stored, 5n, 'its own view unchanged until the follower takes the other copy\'s');
  t.equal(cp.position, 6n);
  t.equal(await cp.passed(7n), 'kept', 'a lost store is not tried again at once');
  await cp.reload();
  t.equal(cp.position, 50n, "reload: where the other copy stored it");
  t.equal(cp.stored, 50n);
  t.equal(await cp.idle(), 'kept', 'taken the other copy\'s view: nothing to store');
  t.equal(await cp.store(), 'kept');
});

t.test('a wall clock stepped back (NTP, a VM restored) does not hold the idle store off', async (t) => {
  const cp = new LazyCheckpoint(store, 'follower-clock', 1);
  cp.at(-1n);
  t.equal(await cp.passed(10n), 'stored');
  t.equal(await cp.passed(20n), 'kept');
  const realNow = Date.now;
  Date.now = () => realNow() - 3_600_000; // an hour back, right after the move
  t.teardown(() => (Date.now = realNow));
  await sleep(CHECKPOINT_IDLE_STORE_MS + 50);
  t.equal(await cp.idle(), 'stored', 'stored once idle for a second, not an hour and a second later');
  t.equal(await storedPosition('follower-clock'), 20n);
});
