/**
 * The contract every EventStore adapter honours. Run by test/contract/eventStore.test.ts on SQLite
 * always and on EventStoreDB when EVENTSTORE_URL is set. Stream names are unique per run, and checks
 * on the global log only look at this run's streams, so a shared server is fine.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { type EventStore, type RecordedEvent, WrongExpectedRevisionError } from '../../src/ports/eventStore.ts';

export interface EventStoreUnderTest {
  store: EventStore;
  /** The SQLite file behind the store: enables the cross-process case. */
  file?: string;
  /** Opens a fresh store on the same data, as a restarted process would. Enables the restart case. */
  reopen?: () => Promise<EventStore>;
  /** Closes whatever is still open and removes temporary data. Must tolerate an already closed store. */
  cleanup(): Promise<void>;
}

export type MakeEventStore = () => Promise<EventStoreUnderTest>;

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OTHER_PROCESS_SCRIPT = fileURLToPath(new URL('../fixtures/appendFromAnotherProcess.ts', import.meta.url));

export function eventStoreContract(t: Test, name: string, makeStore: MakeEventStore) {
  const run = randomUUID().slice(0, 8);
  let counter = 0;
  /** A stream name unique to this run; every one starts with `contract-<run>-`. */
  const stream = (label: string) => `contract-${run}-${label}-${(counter += 1)}`;
  const ours = (event: RecordedEvent) => event.streamId.startsWith(`contract-${run}-`);

  return t.test(name, async (t) => {
    const withStore = (title: string, body: (t: Test, h: EventStoreUnderTest) => Promise<void>) =>
      t.test(title, async (t) => {
        const h = await makeStore();
        t.teardown(() => h.cleanup());
        await body(t, h);
      });

    await withStore("'no_stream' creates a stream and conflicts once it exists", async (t, { store }) => {
      const s = stream('no-stream');
      const first = await store.append(s, [event('A', 1), event('B', 2)], 'no_stream');
      t.equal(first.nextExpectedRevision, 1n, 'revision of the last event written');
      t.equal(typeof first.position, 'bigint');
      t.ok(first.position >= 0n, 'a real global position');
      const error = await conflict(t, store.append(s, [event('C', 3)], 'no_stream'));
      t.equal(error?.streamId, s);
      t.equal(error?.expected, 'no_stream');
      t.equal(error?.actual, 1n, 'actual revision as a bigint');
      t.equal((await store.readStream(s)).length, 2, 'the conflicting append wrote nothing');
    });

    await withStore('an exact revision appends; a stale one conflicts', async (t, { store }) => {
      const s = stream('exact');
      await store.append(s, [event('A', 1)], 'no_stream');
      const second = await store.append(s, [event('B', 2), event('C', 3)], 0n);
      t.equal(second.nextExpectedRevision, 2n);
      const third = await store.append(s, [event('D', 4)], 2n);
      t.equal(third.nextExpectedRevision, 3n);
      const stale = await conflict(t, store.append(s, [event('E', 5)], 2n));
      t.equal(stale?.expected, 2n);
      t.equal(stale?.actual, 3n);
      const ahead = await conflict(t, store.append(s, [event('E', 5)], 10n));
      t.equal(ahead?.actual, 3n);
      const missing = await conflict(t, store.append(stream('exact-missing'), [event('E', 5)], 0n));
      t.equal(missing?.actual, 'no_stream');
      t.same(
        (await store.readStream(s)).map((e) => e.type),
        ['A', 'B', 'C', 'D'],
      );
    });

    await withStore('a stream read from a revision on', async (t, { store }) => {
      const s = stream('from-revision');
      await store.append(s, [event('A', 1), event('B', 2), event('C', 3)], 'no_stream');
      const all = await store.readStream(s);
      const tail = await store.readStream(s, { fromRevision: 1n });
      t.same(tail.map((e) => [e.type, e.revision]), [['B', 1n], ['C', 2n]], 'from that revision, inclusive');
      t.same(tail.map((e) => e.position), all.slice(1).map((e) => e.position), 'the same events');
      t.same(await store.readStream(s, { fromRevision: 3n }), [], 'past the end: nothing');
      t.same(await store.readStream(stream('from-revision-missing'), { fromRevision: 0n }), [], 'a missing stream: nothing');
      t.same((await store.readStream(s, { fromRevision: 0n })).map((e) => e.type), ['A', 'B', 'C'], 'from 0: all');
    });

    await withStore('a deleted stream reads as never written, and only it', async (t, { store }) => {
      if (!store.deleteStream) return void t.pass('this adapter has no deleteStream (callers skip the erasure)');
      const s = stream('deleted');
      const other = stream('deleted-neighbour');
      await store.append(s, [event('A', 1), event('B', 2)], 'no_stream');
      await store.append(other, [event('N', 1)], 'no_stream');
      await store.deleteStream(s);
      t.same(await store.readStream(s), [], 'its events are gone from the stream');
      if (store.streamLastPosition) t.equal(await store.streamLastPosition(s), null, 'no last position');
      await store.deleteStream(s);
      t.pass('deleting it again is no error');
      await store.deleteStream(stream('deleted-never-written'));
      t.pass('nor is deleting a stream never written');
      const again = await store.append(s, [event('C', 3)], 'no_stream');
      t.ok(again.position >= 0n, "a later append expecting 'no_stream' succeeds");
      t.same((await store.readStream(s)).map((e) => e.type), ['C'], 'and reads alone');
      t.same((await store.readStream(other)).map((e) => e.type), ['N'], 'another stream is untouched');
    });

    await withStore("'stream_exists' conflicts on a missing stream and appends to an existing one", async (t, { store }) => {
      const s = stream('exists');
      const error = await conflict(t, store.append(s, [event('A', 1)], 'stream_exists'));
      t.equal(error?.expected, 'stream_exists');
      t.equal(error?.actual, 'no_stream');
      t.same(await store.readStream(s), [], 'nothing was written');
      await store.append(s, [event('A', 1)], 'no_stream');
      const ok = await store.append(s, [event('B', 2)], 'stream_exists');
      t.equal(ok.nextExpectedRevision, 1n);
    });

    await withStore("'any' always appends", async (t, { store }) => {
      const s = stream('any');
      t.equal((await store.append(s, [event('A', 1)], 'any')).nextExpectedRevision, 0n, 'on a missing stream');
      t.equal((await store.append(s, [event('B', 2)], 'any')).nextExpectedRevision, 1n, 'on an existing stream');
      t.equal((await store.append(s, [event('C', 3), event('D', 4)], 'any')).nextExpectedRevision, 3n);
    });

    await withStore('readStream returns the events in order with bigint revisions; a missing stream is []', async (t, { store }) => {
      const s = stream('read');
      const other = stream('read-other');
      const before = Date.now();
      await store.append(s, [event('A', 1, { correlationId: 'c-1' }), event('B', 2)], 'no_stream');
      await store.append(other, [event('X', 0)], 'no_stream');
      const last = await store.append(s, [event('C', 3)], 1n);
      const events = await store.readStream(s);
      t.same(
        events.map((e) => [e.type, e.revision, e.data]),
        [
          ['A', 0n, { n: 1 }],
          ['B', 1n, { n: 2 }],
          ['C', 2n, { n: 3 }],
        ],
      );
      for (const e of events) {
        t.equal(typeof e.revision, 'bigint');
        t.equal(typeof e.position, 'bigint');
        t.equal(e.streamId, s);
        t.ok(e.createdAt instanceof Date && !Number.isNaN(e.createdAt.getTime()), 'createdAt is a Date');
        t.ok(e.createdAt.getTime() >= before - 60_000 && e.createdAt.getTime() <= Date.now() + 60_000, 'createdAt is about now');
        t.match(e.id, /^[0-9a-f-]{36}$/i, 'id is a UUID');
      }
      t.same(events[0]?.metadata, { correlationId: 'c-1' }, 'metadata round-trips');
      t.same(events[1]?.metadata, {}, 'missing metadata reads as {}');
      t.equal(new Set(events.map((e) => e.id)).size, 3, 'ids are unique');
      assertIncreasing(t, events);
      t.equal(events[2]?.position, last.position, 'append returns the position of the event it wrote');
      t.same(await store.readStream(stream('never-written')), [], 'missing stream');
    });

    await withStore('readAll orders events across streams by strictly increasing position, and pages', async (t, { store }) => {
      if ((await store.readAll({ limit: 1 })).length === 0) {
        t.equal(await store.headPosition(), -1n, 'headPosition of an empty log is -1n');
        t.same(await store.readAll(), [], 'an empty log reads as []');
      }
      const head = await store.headPosition();
      const a = stream('all-a');
      const b = stream('all-b');
      await store.append(a, [event('A1', 1)], 'no_stream');
      await store.append(b, [event('B1', 2)], 'no_stream');
      await store.append(a, [event('A2', 3), event('A3', 4)], 0n);
      const lastAppend = await store.append(b, [event('B2', 5)], 0n);

      const all = await store.readAll({ after: head });
      assertIncreasing(t, all);
      t.ok(all.every((e) => e.position > head), 'every event is strictly after `after`');
      const mine = all.filter(ours);
      t.same(
        mine.map((e) => `${e.streamId === a ? 'a' : 'b'}:${e.type}`),
        ['a:A1', 'b:B1', 'a:A2', 'a:A3', 'b:B2'],
      );
      t.ok((await store.headPosition()) >= lastAppend.position, 'headPosition reaches the last append');
      t.equal(mine.at(-1)?.position, lastAppend.position);

      const first = mine[0]!;
      const next = await store.readAll({ after: first.position, limit: 1 });
      t.equal(next.length, 1);
      t.ok(next[0]!.position > first.position, '`after` is exclusive');
      t.not(next[0]!.id, first.id);

      t.equal((await store.readAll({ after: head, limit: 2 })).length, 2, 'limit caps the page');

      const paged: RecordedEvent[] = [];
      let after = head;
      for (let guard = 0; paged.filter(ours).length < mine.length && guard < 1000; guard += 1) {
        const page = await store.readAll({ after, limit: 2 });
        t.ok(page.length <= 2, 'a page holds at most `limit` events');
        if (page.length === 0) break;
        paged.push(...page);
        after = page.at(-1)!.position;
      }
      assertIncreasing(t, paged);
      t.same(
        paged.filter(ours).map((e) => e.id),
        mine.map((e) => e.id),
        'paging with after/limit yields the same events as one read',
      );

      const ofTypes = (await store.readAll({ after: head, types: ['A2', 'B2'] })).filter(ours);
      t.same(ofTypes.map((e) => e.type), ['A2', 'B2'], '`types` reads only events of those types, in order');
      const firstOfTypes = await store.readAll({ after: head, limit: 1, types: ['A3', 'B2'] });
      // (another writer on a shared server may have written an A3 or a B2 since `head`: then that one comes first)
      t.ok(firstOfTypes.length === 1 && ['A3', 'B2'].includes(firstOfTypes[0]!.type) && firstOfTypes[0]!.position <= mine[3]!.position, 'the events passed over do not count against `limit`');
      const rest = await store.readAll({ after: mine[3]!.position, types: ['A3', 'B2'] });
      t.same(rest.filter(ours).map((e) => e.type), ['B2'], '`after` pages through a filtered read');
      t.same(await store.readAll({ after: head, types: [] }), [], 'no type: no event');
    });

    await withStore('concurrent appends with the same expected revision: exactly one wins', async (t, { store }) => {
      const s = stream('race');
      await store.append(s, [event('Created', 0)], 'no_stream');
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => store.append(s, [event('Raced', i)], 0n)),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      t.equal(won.length, 1, 'one append wins');
      t.equal(lost.length, 7);
      t.ok(
        lost.every((r) => r.reason instanceof WrongExpectedRevisionError && r.reason.actual === 1n),
        'the others get WrongExpectedRevisionError with actual 1n',
      );
      const events = await store.readStream(s);
      t.same(
        events.map((e) => e.revision),
        [0n, 1n],
      );

      const fresh = stream('race-new');
      const creations = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) => store.append(fresh, [event('Created', i)], 'no_stream')),
      );
      t.equal(creations.filter((r) => r.status === 'fulfilled').length, 1, "one 'no_stream' creation wins");
      t.equal((await store.readStream(fresh)).length, 1);
    });

    await withStore('waitForNew resolves on a new event, on timeout and on abort', async (t, { store }) => {
      const s = stream('wait');
      await store.append(s, [event('A', 1)], 'no_stream');
      const head = await store.headPosition();

      let started = Date.now();
      await store.waitForNew(head - 1n, 10_000);
      t.ok(Date.now() - started < 2_000, 'resolves at once when an event after `after` exists');

      started = Date.now();
      const waiting = store.waitForNew(head, 10_000);
      setTimeout(() => void store.append(s, [event('B', 2)], 0n), 100);
      await waiting;
      t.ok(Date.now() - started < 3_000, 'resolves soon after an append');

      const newHead = await store.headPosition();
      started = Date.now();
      await store.waitForNew(newHead, 300);
      const waited = Date.now() - started;
      t.ok(waited >= 250 && waited < 3_000, `resolves on timeout (${waited} ms)`);

      const controller = new AbortController();
      started = Date.now();
      setTimeout(() => controller.abort(), 100);
      await store.waitForNew(newHead, 30_000, controller.signal);
      t.ok(Date.now() - started < 2_000, 'resolves on abort');

      started = Date.now();
      await store.waitForNew(newHead, 30_000, controller.signal);
      t.ok(Date.now() - started < 1_000, 'resolves at once when already aborted');
    });

    await withStore('subscribeToAll delivers the history, then live events', async (t, { store }) => {
      const s = stream('sub');
      const head = await store.headPosition();
      await store.append(s, [event('H1', 1), event('H2', 2)], 'no_stream');
      const sub = subscriber(store, head, ours);
      t.teardown(() => sub.stop());
      await sub.waitFor(2, 5_000);
      await store.append(s, [event('L1', 3)], 1n);
      await store.append(stream('sub-other'), [event('L2', 4)], 'no_stream');
      const received = await sub.waitFor(4, 5_000);
      t.same(
        received.map((e) => e.type),
        ['H1', 'H2', 'L1', 'L2'],
      );
      assertIncreasing(t, received);
      const logged = (await store.readAll({ after: head })).filter(ours);
      t.same(
        received.map((e) => e.id),
        logged.map((e) => e.id),
        'the same events as readAll, in the same order',
      );
      await sub.stop();
      t.same(sub.errors, [], 'no subscription errors');
    });

    await withStore('a subscription resumed from a stored checkpoint after a restart yields exactly the events after it', async (t, h) => {
      if (!h.reopen) {
        t.skip('this adapter cannot be reopened', () => {});
        return;
      }
      const s = stream('restart');
      const head = await h.store.headPosition();
      await h.store.append(s, [event('E1', 1), event('E2', 2), event('E3', 3)], 'no_stream');
      const before = subscriber(h.store, head, ours);
      const seen = await before.waitFor(3, 5_000);
      await before.stop();
      const checkpoint = seen[1]!.position; // E1 and E2 were processed and checkpointed
      await h.store.close();

      const store = await h.reopen();
      t.teardown(() => store.close());
      await store.append(s, [event('E4', 4), event('E5', 5)], 2n);
      const after = subscriber(store, checkpoint, ours);
      t.teardown(() => after.stop());
      const resumed = await after.waitFor(3, 5_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      t.same(
        after.received.map((e) => e.type),
        ['E3', 'E4', 'E5'],
        'nothing skipped, nothing twice',
      );
      t.equal(resumed[0]?.id, seen[2]?.id, 'the first event after the checkpoint is the same event as before the restart');
      t.same(
        resumed.map((e) => e.revision),
        [2n, 3n, 4n],
      );
      await after.stop();
      t.same(after.errors, []);
    });

    await withStore('ping answers while the store is open; the optional reads agree with the stream', async (t, { store }) => {
      await store.ping();
      t.pass('ping resolved');
      const s = stream('optional-reads');
      if (store.streamLastPosition) {
        t.equal(await store.streamLastPosition(s), null, 'streamLastPosition: null before the stream exists');
        await store.append(s, [event('A', 1)], 'no_stream');
        const second = await store.append(s, [event('B', 2), event('C', 3)], 0n);
        t.equal(await store.streamLastPosition(s), second.position, "streamLastPosition: its last event's global position");
        const other = await store.append(stream('optional-reads-other'), [event('D', 4)], 'no_stream');
        t.equal(await store.streamLastPosition(s), second.position, "another stream's append does not move it");
        t.ok(other.position > second.position);
      } else t.pass('this adapter has no streamLastPosition (callers read the stream)');
      if (store.markPosition) {
        t.equal(await store.markPosition(`no-such-mark-${run}`), null, 'markPosition: null for a mark the store does not keep');
      } else t.pass('this adapter has no markPosition (callers use headPosition)');
    });

    await withStore('offThreadAppends, where present, is the same log with the same guarantees', async (t, { store }) => {
      if (!store.offThreadAppends) return void t.pass('this adapter has no offThreadAppends (the store itself is used)');
      const background = store.offThreadAppends();
      const s = stream('off-thread');
      const first = await background.append(s, [event('A', 1)], 'no_stream');
      t.equal(first.nextExpectedRevision, 0n);
      const stale = await conflict(t, background.append(s, [event('B', 2)], 'no_stream'));
      t.equal(stale?.actual, 0n, 'its expected revision is checked');
      const mine = await store.append(s, [event('C', 3)], 0n);
      t.ok(mine.position > first.position, 'one log: the positions of both increase together');
      t.same((await background.readStream(s)).map((e) => e.type), ['A', 'C'], 'it reads what the store appended');
      t.same((await store.readStream(s)).map((e) => e.type), ['A', 'C']);
      t.equal(await background.headPosition(), await store.headPosition());
    });

    await withStore('appends from a second process reach an open subscription within 1 second', async (t, { store, file }) => {
      if (!file) {
        t.skip('only for a file-backed store', () => {});
        return;
      }
      const s = stream('other-process');
      const head = await store.headPosition();
      await store.append(s, [event('Here', 0)], 'no_stream');
      const sub = subscriber(store, head, ours);
      t.teardown(() => sub.stop());
      await sub.waitFor(1, 5_000);

      const output = await runNode([OTHER_PROCESS_SCRIPT, file, s, '3']);
      const committedAt = Date.now();
      t.match(output, /^appended \d+/m, 'the other process appended');
      const received = await sub.waitFor(4, 1_000);
      t.ok(Date.now() - committedAt <= 1_000, `received ${Date.now() - committedAt} ms after the other process committed`);
      t.same(
        received.map((e) => e.type),
        ['Here', 'AppendedElsewhere', 'AppendedElsewhere', 'AppendedElsewhere'],
      );
      t.same(
        received.map((e) => e.revision),
        [0n, 1n, 2n, 3n],
      );
      assertIncreasing(t, received);
      await sub.stop();
      t.same(sub.errors, []);
    });
  });
}

function event(type: string, n: number, metadata?: Record<string, unknown>) {
  return metadata ? { type, data: { n }, metadata } : { type, data: { n } };
}

/** Awaits a rejection and checks it is the typed conflict. */
async function conflict(t: Test, promise: Promise<unknown>): Promise<WrongExpectedRevisionError | undefined> {
  try {
    await promise;
    t.fail('expected WrongExpectedRevisionError, the append succeeded');
    return undefined;
  } catch (error) {
    t.type(error, WrongExpectedRevisionError, 'WrongExpectedRevisionError');
    return error instanceof WrongExpectedRevisionError ? error : undefined;
  }
}

function assertIncreasing(t: Test, events: RecordedEvent[]) {
  const ok = events.every((e, i) => typeof e.position === 'bigint' && (i === 0 || e.position > events[i - 1]!.position));
  t.ok(ok, 'positions are bigints, strictly increasing');
}

interface Subscriber {
  received: RecordedEvent[];
  errors: unknown[];
  /** Resolves with the events once at least `count` arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs: number): Promise<RecordedEvent[]>;
  stop(): Promise<void>;
}

/** Consumes `subscribeToAll` with `for await` in the background, keeping the events that match. */
function subscriber(store: EventStore, after: bigint, keep: (event: RecordedEvent) => boolean): Subscriber {
  const controller = new AbortController();
  const received: RecordedEvent[] = [];
  const errors: unknown[] = [];
  const done = (async () => {
    for await (const event of store.subscribeToAll({ after, signal: controller.signal, onError: (e) => errors.push(e) })) {
      if (keep(event)) received.push(event);
    }
  })();
  done.catch((error) => errors.push(error));
  return {
    received,
    errors,
    async waitFor(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`subscription delivered ${received.length} of ${count} events within ${timeoutMs} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return received.slice();
    },
    async stop() {
      controller.abort();
      await done.catch(() => {});
    },
  };
}

/** Runs a TypeScript script in a new Node process (through tsx) and returns its stdout. */
function runNode(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`child exited with ${code}: ${stderr}`));
    });
  });
}
