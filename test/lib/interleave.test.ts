import t from 'tap';
import { interleaveBy } from '../../src/lib/interleave.ts';

t.test('groups take turns, each keeping its own order', async (t) => {
  const items = ['a1', 'a2', 'a3', 'a4', 'b1', 'a5', 'c1', 'b2'];
  t.same(interleaveBy(items, (x) => x[0]!), ['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4', 'a5']);
  t.same(interleaveBy([], (x: string) => x), []);
  t.same(interleaveBy(['x1', 'x2'], (x) => x[0]!), ['x1', 'x2'], 'one group: unchanged');
});
