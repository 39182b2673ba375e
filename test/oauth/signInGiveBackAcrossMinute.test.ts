import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteCounterStore } from '../../src/adapters/sqlite/sqliteCounterStore.ts';
import { SignInThrottle } from '../../src/http/web/signInThrottle.ts';
import { TestClock } from '../helpers/testApp.ts';

/**
 * giveBack takes back the attempt from the bucket it was counted in, not the bucket of now: a success
 * whose scrypt check straddles a minute boundary must not stay counted as a failure of the address.
 */
t.test('a success given back in the next minute takes back its own attempt', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'giveback-'));
  const counters = new SqliteCounterStore(join(dir, 'c.sqlite'));
  t.teardown(() => {
    counters.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const clock = new TestClock(new Date('2026-05-01T10:00:59.950Z'));
  const throttle = new SignInThrottle(counters, clock, 3);
  let admitted = 0;
  for (let i = 0; i < 3; i++) {
    t.equal(await throttle.attempt('address|ip'), 0);
    clock.advance(100); // the password check crosses into the next minute
    await throttle.giveBack("address|ip", Date.parse("2026-05-01T10:00:59.950Z") + i * 60_000); // a success
    clock.advance(60_000 - 100);
  }
  for (let i = 0; i < 3; i++) if ((await throttle.attempt('address|ip')) === 0) admitted += 1;
  t.equal(admitted, 3, `three successes leave the address all of its 3 failures (admitted: ${admitted})`);
});
