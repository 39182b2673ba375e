import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type MessagePort, Worker } from 'node:worker_threads';
import t, { type Test } from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import { canCountHandles, handlesTo } from '../helpers/openHandles.ts';

/**
 * One writer per process: a thread given a port to another store's writer thread
 * (`shareWriter`) appends through it, so no thread of the process waits for the file's write lock
 * that another of its threads holds (SQLite's busy wait sleeps 1…100 ms a try), and the store that
 * shares its writer stops committing on its own thread. The adapter contract on this path runs in
 * test/contract/eventStore.test.ts.
 */
const dir = mkdtempSync(join(tmpdir(), 'shared-writer-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

type Reply = { kind: string; [key: string]: unknown };

async function setUp(t: Test) {
  const file = join(dir, `events-${(n += 1)}.sqlite`);
  const owner = new SqliteEventStore(file);
  const writer = owner.shareWriter();
  const thread = new Worker(new URL('../../src/lib/tsWorker.js', import.meta.url), {
    workerData: { entry: new URL('../fixtures/sharedWriterThread.ts', import.meta.url).href, file, writer },
    transferList: [writer],
  });
  const replies: Reply[] = [];
  const waiting: Array<(reply: Reply) => void> = [];
  thread.on('message', (reply: Reply) => {
    const next = waiting.shift();
    if (next) next(reply);
    else replies.push(reply);
  });
  const nextReply = () => new Promise<Reply>((resolve) => (replies.length > 0 ? resolve(replies.shift()!) : waiting.push(resolve)));
  const ask = (message: object) => {
    thread.postMessage(message);
    return nextReply();
  };
  t.equal((await nextReply()).kind, 'ready');
  t.teardown(async () => {
    await thread.terminate();
    await owner.close();
  });
  const askTransferring = (message: object, transfer: MessagePort[]) => {
    thread.postMessage(message, transfer);
    return nextReply();
  };
  return { file, owner, ask, askTransferring };
}

/** Holds the file's write lock from a connection of its own for `ms`, as another process would. */
async function holdingWriteLock<T>(file: string, ms: number, during: () => Promise<T>): Promise<T> {
  const other = new Database(file);
  other.pragma('busy_timeout = 10000');
  other.exec('BEGIN IMMEDIATE');
  const release = setTimeout(() => {
    other.exec('COMMIT');
    other.close();
  }, ms);
  try {
    return await during();
  } finally {
    clearTimeout(release);
    if (other.open) {
      other.exec('COMMIT');
      other.close();
    }
  }
}

t.test("appends of both threads land in one log, each stream's revisions in order", async (t) => {
  const { file, owner, ask } = await setUp(t);
  const stream = 'shared-stream';
  const [fromThread, fromOwner] = await Promise.all([
    ask({ kind: 'append', streamId: stream, count: 200 }),
    Promise.all(Array.from({ length: 200 }, (_, i) => owner.append(stream, [{ type: 'FromOwner', data: { i } }], 'any'))),
  ]);
  t.equal((fromThread.positions as string[]).length, 200);
  t.equal(fromOwner.length, 200);
  const events = await owner.readStream(stream);
  t.equal(events.length, 400, 'every append of both threads is stored');
  t.same(
    events.map((e) => e.revision),
    Array.from({ length: 400 }, (_, i) => BigInt(i)),
    'one revision sequence, no gap or repeat',
  );
  t.same(events.filter((e) => e.type === 'FromThread').length, 200);
  // Durable: a connection opened afterwards reads them.
  const reader = new Database(file, { readonly: true });
  t.equal((reader.prepare('SELECT COUNT(*) AS c FROM events WHERE stream_id = ?').get(stream) as { c: number }).c, 400);
  reader.close();
});

t.test('the expected revision is checked across threads', async (t) => {
  const { owner, ask } = await setUp(t);
  await owner.append('cas', [{ type: 'First', data: {} }], 'no_stream');
  t.same(await ask({ kind: 'appendExpecting', streamId: 'cas', expected: 'no_stream' }), { kind: 'appendedExpecting', result: 'conflict' });
  t.same(await ask({ kind: 'appendExpecting', streamId: 'cas', expected: '0' }), { kind: 'appendedExpecting', result: 'ok' });
  await t.rejects(owner.append('cas', [{ type: 'Stale', data: {} }], 0n), { name: 'WrongExpectedRevisionError' });
  t.equal((await owner.readStream('cas')).length, 2);
});

t.test("neither thread's event loop waits for the write lock", async (t) => {
  const { file, owner, ask } = await setUp(t);
  // The thread's append goes to the writer thread, which waits for the lock; the thread's own loop runs on.
  const inThread = (await holdingWriteLock(file, 400, () => ask({ kind: 'appendWatchingLoop', streamId: 'lock-thread' }))) as unknown as {
    maxLagMs: number;
    appendMs: number;
  };
  t.ok(inThread.appendMs >= 300, `the append waited for the lock (${inThread.appendMs.toFixed(0)} ms)`);
  t.ok(inThread.maxLagMs < 150, `the thread's loop ran on meanwhile (largest timer lag ${inThread.maxLagMs.toFixed(0)} ms)`);

  // A lone append of the store that shares its writer is not committed on its own thread either.
  let maxLagMs = 0;
  let due = performance.now() + 5;
  const timer = setInterval(() => {
    const now = performance.now();
    maxLagMs = Math.max(maxLagMs, now - due);
    due = now + 5;
  }, 5);
  const started = performance.now();
  await holdingWriteLock(file, 400, async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    await owner.append('lock-owner', [{ type: 'Lone', data: {} }], 'any');
    maxLagMs = Math.max(maxLagMs, performance.now() - due);
  });
  clearInterval(timer);
  t.ok(performance.now() - started >= 300, 'the append waited for the lock');
  t.ok(maxLagMs < 150, `this thread's loop ran on meanwhile (largest timer lag ${maxLagMs.toFixed(0)} ms)`);
  t.equal((await owner.readStream('lock-owner')).length, 1);
});

t.test('when the shared writer closes, the thread appends through a writer of its own', async (t) => {
  const { owner, ask } = await setUp(t);
  await ask({ kind: 'append', streamId: 'before', count: 3 });
  await owner.close();
  const after = await ask({ kind: 'append', streamId: 'after', count: 5 });
  t.equal((after.positions as string[]).length, 5, 'appends still succeed');
  const reader = new SqliteEventStore(join(dir, `events-${n}.sqlite`));
  t.equal((await reader.readStream('before')).length, 3);
  t.equal((await reader.readStream('after')).length, 5);
  await reader.close();
  t.same(await ask({ kind: 'close' }), { kind: 'closed' });
});

t.test('the process holds one writing connection to the log: the thread has none of its own', { skip: !canCountHandles && 'needs /proc' }, async (t) => {
  const { file, owner, ask } = await setUp(t);
  await owner.append('own', [{ type: 'FromOwner', data: {} }], 'any');
  await Promise.all([ask({ kind: 'append', streamId: 'theirs', count: 20 }), owner.append('own', [{ type: 'FromOwner', data: {} }], 'any')]);
  t.equal(handlesTo(file), 3, 'open handles to the file: one reading connection per store and the one writer');
});

t.test('a shared writer that closes before the thread ever appended: the thread appends through a writer of its own', async (t) => {
  const { file, owner, ask } = await setUp(t);
  await owner.append('owner', [{ type: 'FromOwner', data: {} }], 'any');
  await owner.close();
  const answer = await Promise.race([
    ask({ kind: 'append', streamId: 'after', count: 4 }),
    new Promise<Reply>((resolve) => setTimeout(() => resolve({ kind: 'no answer within 5 s' }), 5_000)),
  ]);
  t.equal(answer.kind, 'appended');
  t.equal((answer.positions as string[] | undefined)?.length, 4, 'every append succeeded');
  const reader = new SqliteEventStore(file);
  t.equal((await reader.readStream('after')).length, 4);
  await reader.close();
  // Its own writer is a thread too: a lone append waiting for the lock does not hold this thread's loop.
  const lone = (await holdingWriteLock(file, 400, () => ask({ kind: 'appendWatchingLoop', streamId: 'lone-after' }))) as unknown as { maxLagMs: number; appendMs: number };
  t.ok(lone.appendMs >= 300, `the append waited for the lock (${lone.appendMs.toFixed(0)} ms)`);
  t.ok(lone.maxLagMs < 150, `the thread's loop ran on meanwhile (largest timer lag ${lone.maxLagMs.toFixed(0)} ms)`);
  const closed = await Promise.race([ask({ kind: 'close' }), new Promise<Reply>((resolve) => setTimeout(() => resolve({ kind: 'close hung' }), 5_000))]);
  t.same(closed, { kind: 'closed' });
});

t.test("after the owner's writer thread ends and a new one starts, the thread is handed a port to it and drops its own writer", { skip: !canCountHandles && 'needs /proc' }, async (t) => {
  const { file, owner, ask, askTransferring } = await setUp(t);
  await ask({ kind: 'append', streamId: 'before', count: 3 });
  const restarts: number[] = [];
  // What the background roles' thread starter does (src/processors/backgroundThread.ts).
  owner.onWriterRestart(() => {
    restarts.push(Date.now());
    const port = owner.shareWriter();
    void askTransferring({ kind: 'writer', port }, [port]).then((reply) => t.equal(reply.kind, 'adopted'));
  });
  // The owner's writer thread dies (the store's own field: no public way to kill it).
  await (owner as unknown as { writer: Worker }).writer.terminate();
  const fallback = await ask({ kind: 'append', streamId: 'meanwhile', count: 3 });
  t.equal((fallback.positions as string[]).length, 3, 'the thread appends through a writer of its own meanwhile');
  t.equal(handlesTo(file), 3, 'two readers and the thread\'s own writer');

  await owner.append('owner-again', [{ type: 'FromOwner', data: {} }], 'any'); // starts the owner's next writer thread
  t.equal(restarts.length, 1, 'the new writer thread is announced once');
  await new Promise((resolve) => setTimeout(resolve, 300)); // the port reaches the thread, its own writer ends
  const after = await ask({ kind: 'append', streamId: 'after', count: 5 });
  t.equal((after.positions as string[]).length, 5, 'appends succeed through the new port');
  await owner.append('owner-again', [{ type: 'FromOwner', data: {} }], 'any');
  t.equal(handlesTo(file), 3, 'one writer again: the owner\'s new writer thread, and the two readers');
  const reader = new SqliteEventStore(file);
  for (const [stream, count] of [['before', 3], ['meanwhile', 3], ['after', 5], ['owner-again', 2]] as const) t.equal((await reader.readStream(stream)).length, count, stream);
  await reader.close();
});

t.test('a port handed over while an append is with the writer: the append is answered through the port it went to', async (t) => {
  const { file, owner, ask, askTransferring } = await setUp(t);
  await ask({ kind: 'append', streamId: 'first', count: 1 });
  // The writer waits for the lock, so the thread's append is still unanswered when the new port arrives.
  const port = owner.shareWriter();
  const reply = await holdingWriteLock(file, 300, () => askTransferring({ kind: 'appendThenAdopt', streamId: 'across', port }, [port]));
  t.same(reply, { kind: 'appendedAcrossAdopt', result: 'ok' }, 'the append succeeded (the earlier port closes only once it has answered)');
  t.equal((await owner.readStream('across')).length, 1, 'stored once');
  const after = await ask({ kind: 'append', streamId: 'after-adopt', count: 3 });
  t.equal((after.positions as string[]).length, 3, 'later appends go through the new port');
  t.same(await ask({ kind: 'close' }), { kind: 'closed' });
});
