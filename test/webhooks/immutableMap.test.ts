import t from 'tap';
import { ImmutableMap } from '../../src/domain/immutableMap.ts';

t.test('set and delete return new maps and leave the old ones as they were', async (t) => {
  const empty = ImmutableMap.empty<number>();
  const one = empty.set('a', 1);
  const two = one.set('b', 2);
  const replaced = two.set('a', 10);
  const removed = replaced.delete('b');
  t.same([empty.size, one.size, two.size, replaced.size, removed.size], [0, 1, 2, 2, 1]);
  t.equal(one.get('a'), 1, 'the older map still reads the old value');
  t.equal(replaced.get('a'), 10);
  t.ok(two.has('b'), 'deleting from a newer map leaves the older one whole');
  t.notOk(removed.has('b'));
  t.equal(removed.delete('missing'), removed, 'deleting an absent key returns the same map');
});

t.test('iterates in insertion order; replacing a value keeps its place', async (t) => {
  let m = ImmutableMap.empty<string>();
  for (const k of ['z', 'a', 'm', 'b']) m = m.set(k, k.toUpperCase());
  m = m.set('a', 'A2').delete('m').set('m', 'M2');
  t.same([...m.keys()], ['z', 'a', 'b', 'm']);
  t.same([...m.values()], ['Z', 'A2', 'B', 'M2']);
  t.same([...m], [['z', 'Z'], ['a', 'A2'], ['b', 'B'], ['m', 'M2']]);
});

t.test('agrees with a Map over many random changes, every version kept', async (t) => {
  let seed = 42;
  const random = () => ((seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
  let m = ImmutableMap.empty<number>();
  const reference = new Map<string, number>();
  const versions: Array<[ImmutableMap<number>, Map<string, number>]> = [];
  for (let i = 0; i < 20_000; i++) {
    const key = `k${Math.floor(random() * 5_000)}`;
    if (random() < 0.3) {
      m = m.delete(key);
      reference.delete(key);
    } else {
      m = m.set(key, i);
      reference.set(key, i);
    }
    if (i % 2_000 === 0) versions.push([m, new Map(reference)]);
  }
  versions.push([m, reference]);
  for (const [map, ref] of versions) {
    t.equal(map.size, ref.size);
    t.same([...map.entries()], [...ref.entries()], 'same entries in the same order');
    t.ok([...ref.keys()].every((k) => map.get(k) === ref.get(k) && map.has(k)));
    t.notOk(map.has('absent'));
  }
});
