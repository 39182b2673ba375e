import t from 'tap';
import { startTimedWorkers } from '../../src/lib/timedWorkers.ts';
import type { Job } from './fixtures/timedWork.ts';

const entry = new URL('./fixtures/timedWork.ts', import.meta.url);
const start = (options: { threads?: number; timeoutMs?: number; maxHeapMb?: number; maxQueued?: number; maxQueuedPerKey?: number } = {}) =>
  startTimedWorkers<Job, string>(entry, { threads: 1, timeoutMs: 5_000, maxHeapMb: 64, maxQueued: 100, ...options });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a run past its budget ends its thread and rejects as over_budget; a new thread takes the next run', async (t) => {
  const workers = start({ timeoutMs: 500 });
  t.teardown(() => workers.close());
  t.equal(await workers.run({ kind: 'echo', value: 'first' }), 'first');
  const started = performance.now();
  await t.rejects(workers.run({ kind: 'spin', ms: 60_000, value: 'never' }), { name: 'TimedWorkError', reason: 'over_budget' });
  const ms = performance.now() - started;
  t.ok(ms < 2_000, `refused after ${Math.round(ms)} ms (budget 500)`);
  t.equal(await workers.run({ kind: 'echo', value: 'after' }), 'after', 'the replacement thread answers');
});

t.test('the budget counts the run, not the wait for a free thread', async (t) => {
  const workers = start({ timeoutMs: 1_000 });
  t.teardown(() => workers.close());
  await workers.run({ kind: 'echo', value: 'ready' });
  // Three runs of 600 ms each on one thread: the last waits 1,200 ms, more than the budget, and still finishes.
  const runs = ['a', 'b', 'c'].map((value) => workers.run({ kind: 'spin', ms: 600, value }));
  t.same(await Promise.all(runs), ['a', 'b', 'c']);
});

t.test('a run past the heap limit rejects as over_memory, and the thread is replaced', async (t) => {
  const workers = start({ timeoutMs: 30_000, maxHeapMb: 32 });
  t.teardown(() => workers.close());
  await t.rejects(workers.run({ kind: 'grow' }), { name: 'TimedWorkError', reason: 'over_memory' });
  t.equal(await workers.run({ kind: 'echo', value: 'after' }), 'after');
});

t.test("a run's own failure, or its thread dying under it, rejects as failed; the threads keep serving", async (t) => {
  const workers = start({ threads: 2 });
  t.teardown(() => workers.close());
  await t.rejects(workers.run({ kind: 'fail' }), { name: 'TimedWorkError', reason: 'failed', message: 'the input was bad' });
  await t.rejects(workers.run({ kind: 'exit' }), { name: 'TimedWorkError', reason: 'failed', message: 'the worker thread exited' });
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => workers.run({ kind: 'echo', value: `v${i}` })));
  t.same(results, Array.from({ length: 10 }, (_, i) => `v${i}`));
});

t.test('a thread that keeps dying on its own is restarted less and less often', async (t) => {
  const workers = start();
  t.teardown(() => workers.close());
  await workers.run({ kind: 'echo', value: 'ready' });
  const gaps: number[] = [];
  await t.rejects(workers.run({ kind: 'exit' }), { name: 'TimedWorkError', reason: 'failed' });
  for (let i = 0; i < 5; i++) {
    // Each run waits for the thread that replaces the one the run before ended: 100, 200, 400, 800, 1600 ms, then its
    // start. A thread's start alone varied by 400 ms on a loaded CI machine: the first and last waits are 1.5 s apart.
    const before = performance.now();
    await t.rejects(workers.run({ kind: 'exit' }), { name: 'TimedWorkError', reason: 'failed' });
    gaps.push(performance.now() - before);
  }
  t.ok(gaps[4]! > gaps[0]! + 800 && gaps[4]! >= 1600, `the waits grow: ${gaps.map(Math.round).join(', ')} ms`);
  t.equal(await workers.run({ kind: 'echo', value: 'still' }), 'still');
});

t.test('at most maxQueued runs wait; more are refused at once as queue_full', async (t) => {
  const workers = start({ maxQueued: 2 });
  t.teardown(() => workers.close());
  await workers.run({ kind: 'echo', value: 'ready' });
  const running = workers.run({ kind: 'spin', ms: 300, value: 'r' });
  await sleep(50);
  const queued = [workers.run({ kind: 'echo', value: 'q1' }), workers.run({ kind: 'echo', value: 'q2' })];
  await t.rejects(workers.run({ kind: 'echo', value: 'q3' }), { name: 'TimedWorkError', reason: 'queue_full' });
  t.same(await Promise.all([running, ...queued]), ['r', 'q1', 'q2']);
});

t.test("keys share the threads: a key's flood waits behind other keys' runs, and one key may have at most maxQueuedPerKey waiting", async (t) => {
  const workers = start({ maxQueuedPerKey: 2 });
  t.teardown(() => workers.close());
  await workers.run({ kind: 'echo', value: 'ready' });
  const done: string[] = [];
  const track = (p: Promise<string>) => p.then((v) => void done.push(v));
  const flood = [1, 2, 3].map((n) => track(workers.run({ kind: 'spin', ms: 200, value: `flood${n}` }, { key: '192.0.2.1' })));
  await sleep(50);
  await t.rejects(workers.run({ kind: 'echo', value: 'flood4' }, { key: '192.0.2.1' }), { name: 'TimedWorkError', reason: 'queue_full' });
  const other = track(workers.run({ kind: 'echo', value: 'other' }, { key: '198.51.100.7' }));
  await Promise.all([...flood, other]);
  t.same(done, ['flood1', 'other', 'flood2', 'flood3'], 'the other sender went before the flood waiting ahead of it');
});

t.test('a key new to the rotation joins at its back: a new address for each run does not go ahead of a waiting one', async (t) => {
  const workers = start();
  t.teardown(() => workers.close());
  await workers.run({ kind: 'echo', value: 'b0' }, { key: 'B' });
  const done: string[] = [];
  const track = (p: Promise<string>) => p.then((v) => void done.push(v));
  const busy = track(workers.run({ kind: 'spin', ms: 200, value: 'x' }, { key: 'X' }));
  await sleep(50);
  const b1 = track(workers.run({ kind: 'echo', value: 'b1' }, { key: 'B' }));
  const fresh = [1, 2, 3].map((n) => track(workers.run({ kind: 'echo', value: `n${n}` }, { key: `2001:db8::${n}` })));
  await Promise.all([busy, b1, ...fresh]);
  t.same(done, ['x', 'b1', 'n1', 'n2', 'n3'], 'B waited first and goes first, though served before');
});

t.test("an aborted run leaves the queue, or ends its thread when it was running; the next run is served", async (t) => {
  const workers = start();
  t.teardown(() => workers.close());
  await workers.run({ kind: 'echo', value: 'ready' });
  const runningStop = new AbortController();
  const running = workers.run({ kind: 'spin', ms: 60_000, value: 'never' }, { signal: runningStop.signal });
  const queuedStop = new AbortController();
  const queued = workers.run({ kind: 'echo', value: 'never' }, { signal: queuedStop.signal });
  await sleep(50);
  queuedStop.abort();
  await t.rejects(queued, { name: 'TimedWorkError', reason: 'abandoned' });
  const started = performance.now();
  runningStop.abort();
  await t.rejects(running, { name: 'TimedWorkError', reason: 'abandoned' });
  t.equal(await workers.run({ kind: 'echo', value: 'next' }), 'next');
  t.ok(performance.now() - started < 5_000, 'the running one did not hold its thread');
});

t.test('close refuses what is queued and what is running', async (t) => {
  const workers = start();
  await workers.run({ kind: 'echo', value: 'ready' });
  const running = t.rejects(workers.run({ kind: 'spin', ms: 5_000, value: 'x' }), { name: 'TimedWorkError', reason: 'closed' });
  await sleep(50); // the thread has taken it
  const queued = t.rejects(workers.run({ kind: 'echo', value: 'y' }), { name: 'TimedWorkError', reason: 'closed' });
  await workers.close();
  await Promise.all([queued, running]);
  await t.rejects(workers.run({ kind: 'echo', value: 'z' }), { name: 'TimedWorkError', reason: 'closed' });
});
