import t from 'tap';
import { startTimedWorkers } from '../../src/lib/timedWorkers.ts';
import type { Job } from './fixtures/timedWork.ts';

const entry = new URL('./fixtures/timedWork.ts', import.meta.url);

t.test('a run past its budget ends its thread and rejects with WorkOverBudget; a new thread takes the next run', async (t) => {
  const workers = startTimedWorkers<Job, string>(entry, { threads: 1, timeoutMs: 500, maxHeapMb: 64 });
  t.teardown(() => workers.close());
  t.equal(await workers.run({ kind: 'echo', value: 'first' }), 'first');
  const started = performance.now();
  await t.rejects(workers.run({ kind: 'spin', ms: 60_000, value: 'never' }), { name: 'WorkOverBudget' });
  const ms = performance.now() - started;
  t.ok(ms < 2_000, `refused after ${Math.round(ms)} ms (budget 500)`);
  t.equal(await workers.run({ kind: 'echo', value: 'after' }), 'after', 'the replacement thread answers');
});

t.test('the budget counts the run, not the wait for a free thread', async (t) => {
  const workers = startTimedWorkers<Job, string>(entry, { threads: 1, timeoutMs: 1_000, maxHeapMb: 64 });
  t.teardown(() => workers.close());
  await workers.run({ kind: 'echo', value: 'ready' });
  // Three runs of 600 ms each on one thread: the last waits 1,200 ms, more than the budget, and still finishes.
  const runs = ['a', 'b', 'c'].map((value) => workers.run({ kind: 'spin', ms: 600, value }));
  t.same(await Promise.all(runs), ['a', 'b', 'c']);
});

t.test('a run past the heap limit rejects with WorkOverBudget, and the thread is replaced', async (t) => {
  const workers = startTimedWorkers<Job, string>(entry, { threads: 1, timeoutMs: 30_000, maxHeapMb: 32 });
  t.teardown(() => workers.close());
  await t.rejects(workers.run({ kind: 'grow' }), { name: 'WorkOverBudget' });
  t.equal(await workers.run({ kind: 'echo', value: 'after' }), 'after');
});

t.test("a run's own failure rejects with its message; the thread keeps serving", async (t) => {
  const workers = startTimedWorkers<Job, string>(entry, { threads: 2, timeoutMs: 5_000, maxHeapMb: 64 });
  t.teardown(() => workers.close());
  await t.rejects(workers.run({ kind: 'fail' }), { message: 'the input was bad' });
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => workers.run({ kind: 'echo', value: `v${i}` })));
  t.same(results, Array.from({ length: 10 }, (_, i) => `v${i}`));
});

t.test('close refuses what is queued', async (t) => {
  const workers = startTimedWorkers<Job, string>(entry, { threads: 1, timeoutMs: 5_000, maxHeapMb: 64 });
  const running = workers.run({ kind: 'spin', ms: 300, value: 'x' });
  const queued = t.rejects(workers.run({ kind: 'echo', value: 'y' }), { message: 'the worker threads are closed' });
  const ended = t.rejects(running);
  await workers.close();
  await Promise.all([queued, ended]);
  await t.rejects(workers.run({ kind: 'echo', value: 'z' }), { message: 'the worker threads are closed' });
});
