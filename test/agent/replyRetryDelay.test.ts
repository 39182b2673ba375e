import t from 'tap';
import { retryDelay } from '../../src/processors/agent/replySender.ts';

t.test("a reply's retry delays grow by the factor, and stop at the longest a timer waits", async (t) => {
  const policy = { maxAttempts: 10, baseMs: 60_000, factor: 5, orphanAfterMs: 300_000 };
  t.same([1, 2, 3].map((n) => retryDelay(n, policy)), [60_000, 300_000, 1_500_000]);
  // AGENT_SEND_ATTEMPTS=10 with the default backoff: the 9th delay is 4.7e9 ms, which Node fires at once.
  t.equal(retryDelay(9, policy), 2 ** 31 - 1);
});
