import t from 'tap';
import { timeBound } from '../../src/lib/timeBound.ts';

t.test('timeBound: the work answers first, or the bound does; a late failure is not an unhandled rejection', async (t) => {
  t.equal(await timeBound(Promise.resolve(7), 1_000, 'late'), 7);
  await t.rejects(timeBound(Promise.reject(new Error('down')), 1_000, 'late'), /^down$/, "the work's own failure within the bound");
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  t.teardown(() => process.off('unhandledRejection', onUnhandled));
  const slow = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('too late')), 100));
  const started = performance.now();
  await t.rejects(timeBound(slow, 20, 'no answer within 20 ms'), /^no answer within 20 ms$/);
  t.ok(performance.now() - started < 90, 'rejected at the bound, not when the work failed');
  await new Promise((r) => setTimeout(r, 150));
  t.same(unhandled, [], 'the work failing after the bound is swallowed');
});
