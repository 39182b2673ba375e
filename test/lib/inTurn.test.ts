import t from 'tap';
import { InTurn } from '../../src/lib/inTurn.ts';

const later = () => {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { done, release };
};

t.test('tasks of one key run one after another, in order; other keys run meanwhile', async (t) => {
  const turns = new InTurn();
  const order: string[] = [];
  const first = later();
  const a = turns.run('k', async () => (await first.done, order.push('a1'), 'a1'));
  const b = turns.run('k', async () => (order.push('a2'), 'a2'));
  const other = turns.run('other', async () => (order.push('b'), 'b'));
  t.equal(await other, 'b');
  t.same(order, ['b'], 'the second task of k waits for the first');
  first.release();
  t.same(await Promise.all([a, b]), ['a1', 'a2']);
  t.same(order, ['b', 'a1', 'a2']);
  await new Promise((r) => setImmediate(r));
  t.equal(turns.size, 0, 'an empty key is forgotten');
});

t.test('a failing task does not stop the next one', async (t) => {
  const turns = new InTurn();
  const failed = turns.run('k', () => Promise.reject(new Error('boom')));
  const next = turns.run('k', async () => 'next');
  await t.rejects(failed, /boom/);
  t.equal(await next, 'next');
});

t.test('a task whose turn does not come in time is refused and never runs; the ones after it keep their order', async (t) => {
  const turns = new InTurn();
  const hung = later();
  const ran: string[] = [];
  const first = turns.run('k', async () => (await hung.done, ran.push('first')));
  const waited = turns.run('k', async () => void ran.push('gave up'), { maxWaitMs: 30, onTimeout: () => new Error('busy') });
  const third = turns.run('k', async () => void ran.push('third'));
  await t.rejects(waited, /busy/, 'refused after its wait');
  t.same(ran, [], 'the first still runs, the third still waits for it');
  hung.release();
  await first;
  await third;
  t.same(ran, ['first', 'third'], 'the refused task never ran');
});

t.test('a task whose turn comes in time runs with its wait cleared', async (t) => {
  const turns = new InTurn();
  const quick = turns.run('k', async () => 'quick');
  const waited = turns.run('k', async () => 'waited', { maxWaitMs: 1_000, onTimeout: () => new Error('busy') });
  t.same(await Promise.all([quick, waited]), ['quick', 'waited']);
});

t.test('a task that throws before returning a promise rejects its caller and frees the key', async (t) => {
  const turns = new InTurn();
  const thrown = turns.run('k', (() => {
    throw new Error('sync');
  }) as () => Promise<never>);
  const next = turns.run('k', async () => 'next');
  await t.rejects(thrown, /sync/);
  t.equal(await next, 'next');
});
