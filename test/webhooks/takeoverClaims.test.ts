import t from 'tap';
import type { Test } from 'tap';
import { tempCounterStore } from '../helpers/tempCounterStore.ts';
import type { PendingDelivery } from '../../src/domain/webhookDelivery.ts';
import { TakeoverClaims } from '../../src/processors/webhookDelivery/takeoverClaims.ts';
import { WorkerLiveness } from '../../src/processors/webhookDelivery/workerLiveness.ts';

/** Claims and liveness over a temporary counter store, on a clock the test moves; one delivery held by copy-1. */
function setUp(t: Test) {
  let now = Date.parse('2026-11-29T10:00:00.000Z');
  const counters = tempCounterStore(t, () => now);
  const clock = () => now;
  const liveness = new WorkerLiveness(counters, clock, 750);
  const claimsOf = (id: string) => new TakeoverClaims(counters, liveness, clock, 1_500, id);
  const pending = { subscriptionId: 'sub', deliveryId: 'd1', attempts: 1, workerId: 'copy-1' } as PendingDelivery;
  return { liveness, claimsOf, pending, advance: (ms: number) => void (now += ms) };
}

t.test('takeover claims: one winner; it keeps the delivery while it lives; after it falls silent, another copy claims it; the old name leaves it', async (t) => {
  const { liveness, claimsOf, pending, advance } = setUp(t);

  const [two, three] = await Promise.all([claimsOf('copy-2').claim(pending), claimsOf('copy-3').claim(pending)]);
  t.equal(Number(two) + Number(three), 1, 'of two copies claiming at once, one wins');
  const [winner, other] = two ? ['copy-2', 'copy-3'] : ['copy-3', 'copy-2'];
  await liveness.beat(winner);
  advance(1_600); // a later generation
  await liveness.beat(winner);
  t.equal(await claimsOf(other).claim(pending), false, 'the winner is alive: left to it in the next generation');
  t.equal(await claimsOf('copy-1').claimedByAnother(pending), true, "the stopped copy's name, started again, leaves it too");
  await liveness.beat(other);
  advance(3_000); // the winner has been silent for two windows
  await liveness.beat(other);
  t.equal(await claimsOf(other).claim(pending), true, 'the winner fell silent before its attempt: claimed again');
  t.equal(await claimsOf(winner).claimedByAnother(pending), true, 'and the old winner, back, leaves it');
  t.equal(await claimsOf('copy-9').claim({ ...pending, attempts: 2 }), true, 'once an attempt is recorded, the claims of before no longer apply');
});

t.test('a holder that starts again while a taker claims keeps the delivery; a taker started again holds what it marked', async (t) => {
  const { liveness, claimsOf, pending, advance } = setUp(t);

  // copy-2's scan found copy-1 silent; copy-1 starts again (beats, finds no mark: it holds it) before copy-2 claims.
  t.equal(await liveness.isSilent('copy-1'), true);
  await liveness.beat('copy-1');
  t.equal(await claimsOf('copy-1').claimedByAnother(pending), false, 'the holder, back, finds no mark: it holds the delivery');
  t.equal(await claimsOf('copy-2').claim(pending), false, 'the taker sees the holder beat again: it leaves the delivery');
  t.equal(await claimsOf('copy-2').markedByThis(pending), false, 'and takes its mark back');

  advance(3_000); // copy-1 silent again
  t.equal(await claimsOf('copy-2').claim(pending), true, 'claimed once the holder is silent');
  t.equal(await claimsOf('copy-2').markedByThis(pending), true, 'the taker finds its own mark (it holds the delivery when it starts again)');
  t.equal(await claimsOf('copy-3').markedByThis(pending), false, "another copy's mark is not this one's");
  t.equal(await claimsOf('copy-2').markedByThis({ ...pending, attempts: 2, workerId: 'copy-2' }), false, 'an attempt recorded ends the mark');
});
