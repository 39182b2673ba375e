import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { SqliteCounterStore } from '../../src/adapters/sqlite/sqliteCounterStore.ts';
import { SignInThrottle } from '../../src/http/web/signInThrottle.ts';
import { TestClock } from '../helpers/testApp.ts';

/** The throttle on the real counter store: attempts counted before the password check, refused ones given back. */
const dir = mkdtempSync(join(tmpdir(), 'signin-throttle-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const setUp = (t: Test) => {
  const counters = new SqliteCounterStore(join(dir, `c${n++}.sqlite`));
  t.teardown(() => counters.close());
  const clock = new TestClock(new Date('2026-05-01T10:00:00.000Z'));
  return { clock, throttle: new SignInThrottle(counters, clock) };
};
const admitted = async (throttle: SignInThrottle, pair: string, attempts: number) =>
  (await Promise.all(Array.from({ length: attempts }, () => throttle.attempt(pair)))).filter((wait) => wait === 0).length;

t.test('refused attempts are given back: the lock ends when the five failures leave the window', async (t) => {
  const { clock, throttle } = setUp(t);
  t.equal(await admitted(throttle, 'a|ip', 5), 5, 'five failures');
  clock.advance(5 * 60_000);
  t.equal(await admitted(throttle, 'a|ip', 6), 0, 'six refused five minutes later');
  clock.advance(10 * 60_000 + 1_000);
  t.equal(await throttle.attempt('a|ip'), 0, 'admitted once the failures left the window: the refused six did not count');
});

t.test('a success while refused attempts give back cannot open room for more guesses than the limit', async (t) => {
  const { throttle } = setUp(t);
  t.equal(await admitted(throttle, 'b|ip', 5), 5);
  // Refused attempts in flight (each counts, then gives back) while the right password clears the pair.
  await Promise.all([admitted(throttle, 'b|ip', 10), throttle.succeed('b|ip')]);
  t.equal(await admitted(throttle, 'b|ip', 40), 5, 'at most five guesses after the success');
});

t.test('giveBack takes back one attempt, not the failures before it', async (t) => {
  const { throttle } = setUp(t);
  t.equal(await admitted(throttle, 'address|ip', 4), 4, 'four failures');
  t.equal(await throttle.attempt('address|ip'), 0, 'a fifth attempt, which succeeds');
  await throttle.giveBack('address|ip');
  t.equal(await admitted(throttle, 'address|ip', 10), 1, 'one more failure fills the limit: the success cleared nothing before it');
});
