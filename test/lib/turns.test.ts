import t from 'tap';
import { Turns } from '../../src/lib/turns.ts';

const drain = <T>(turns: Turns<T>) => {
  const out: T[] = [];
  for (let item = turns.take(); item !== undefined; item = turns.take()) out.push(item);
  return out;
};

t.test('groups take turns, each group in its own order', async (t) => {
  const turns = new Turns<string>();
  for (const item of ['a1', 'a2', 'b1', 'a3', 'c1', 'b2', 'a4', 'a5']) turns.add(item[0]!, item);
  t.equal(turns.size, 8);
  t.same(drain(turns), ['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4', 'a5']);
  t.equal(turns.size, 0);
  t.equal(turns.take(), undefined, 'empty');
});

t.test('a group that arrives late takes the next turn, not the place after the whole burst', async (t) => {
  const turns = new Turns<string>();
  for (let i = 1; i <= 6; i++) turns.add('a', `a${i}`);
  t.equal(turns.take(), 'a1');
  t.equal(turns.take(), 'a2');
  turns.add('b', 'b1');
  turns.add('c', 'c1');
  t.same(drain(turns), ['b1', 'c1', 'a3', 'a4', 'a5', 'a6']);
});

t.test('a late group comes before the one just served, not before the others waiting', async (t) => {
  const turns = new Turns<string>();
  for (const item of ['a1', 'a2', 'b1', 'b2']) turns.add(item[0]!, item);
  t.equal(turns.take(), 'a1');
  turns.add('c', 'c1');
  t.same(drain(turns), ['b1', 'c1', 'a2', 'b2']);
});

t.test('a group that emptied joins again at the end of the round', async (t) => {
  const turns = new Turns<string>();
  turns.add('a', 'a1');
  turns.add('b', 'b1');
  turns.add('b', 'b2');
  t.equal(turns.take(), 'a1');
  turns.add('a', 'a2');
  t.same(drain(turns), ['b1', 'a2', 'b2']);
  turns.add('x', 'x1');
  turns.clear();
  t.equal(turns.size, 0);
  t.equal(turns.take(), undefined, 'cleared');
});
