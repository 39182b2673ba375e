import t from 'tap';
import { BUSY, PasswordCheckGate } from '../../src/http/web/passwordCheckGate.ts';

t.test('at most `concurrent` checks run, `waiting` more queue, the rest are BUSY at once; slots pass on in order', async (t) => {
  const gate = new PasswordCheckGate(2, 1);
  let running = 0;
  let most = 0;
  const releases: Array<() => void> = [];
  const check = (n: number) => () =>
    new Promise<number>((resolve) => {
      running += 1;
      most = Math.max(most, running);
      releases.push(() => {
        running -= 1;
        resolve(n);
      });
    });
  const results = [1, 2, 3, 4].map((n) => gate.run(check(n)));
  t.equal(await results[3], BUSY, 'the fourth: no room');
  t.equal(releases.length, 2, 'two run, one waits');
  releases.shift()!();
  t.equal(await results[0], 1);
  await new Promise((r) => setImmediate(r));
  t.equal(releases.length, 2, 'the waiting one took the freed slot');
  releases.shift()!();
  releases.shift()!();
  t.same(await Promise.all(results.slice(1, 3)), [2, 3]);
  t.equal(most, 2);
  t.equal(await gate.run(async () => 'again'), 'again', 'every slot is free again');
});
