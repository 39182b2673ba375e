import t from 'tap';
import { Slots } from '../../src/lib/slots.ts';

t.test('at most `size` holders; the others get a slot in the order they asked, as one is released', async (t) => {
  const slots = new Slots(2);
  const a = (await slots.take())!;
  const b = (await slots.take())!;
  const order: string[] = [];
  const c = slots.take().then((r) => (order.push('c'), r!));
  const d = slots.take().then((r) => (order.push('d'), r!));
  await new Promise((r) => setImmediate(r));
  t.same(order, [], 'both wait while two are held');
  a();
  a(); // a second call frees nothing more
  const releaseC = await c;
  await new Promise((r) => setImmediate(r));
  t.same(order, ['c']);
  // A newcomer does not jump the queue: the next release goes to d.
  const e = slots.take().then((r) => (order.push('e'), r!));
  b();
  const releaseD = await d;
  await new Promise((r) => setImmediate(r));
  t.same(order, ['c', 'd']);
  releaseC();
  (await e)();
  releaseD();
  t.same(order, ['c', 'd', 'e']);
  // Everything released: two at once again.
  t.ok(await slots.take());
  t.ok(await slots.take());
});

t.test('an abort while waiting gives null and leaves the queue', async (t) => {
  const slots = new Slots(1);
  const held = (await slots.take())!;
  const stop = new AbortController();
  const waiting = slots.take(stop.signal);
  const after = slots.take();
  t.equal(slots.waiting, 2);
  stop.abort();
  t.equal(await waiting, null);
  t.equal(slots.waiting, 1, 'the aborted one left the queue');
  t.equal(await slots.take(stop.signal), null, 'already aborted: null at once');
  held();
  t.type(await after, 'function', 'the next in line gets the slot');
  t.equal(slots.waiting, 0);
});
