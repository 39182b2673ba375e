import t from 'tap';
import type { PendingDelivery } from '../../src/domain/webhookDelivery.ts';
import { Scheduler } from '../../src/processors/webhookDelivery/scheduler.ts';

/**
 * A due time stored before retry delays were capped may lie beyond a timer's reach (2^31 − 1 ms):
 * Node fires such a timer at once, so the scheduler waits for it in steps instead.
 */
t.test('a delivery due in 35 days is not attempted now; one due now is', async (t) => {
  const now = Date.parse('2026-01-15T12:00:00.000Z');
  const attempted: string[] = [];
  const scheduler = new Scheduler(
    { concurrency: 4, concurrencyPerSubscription: 4, concurrencyPerTeam: 4, concurrencyPerDestination: 4, now: () => now, placeOf: () => ({ team: 't', destination: 'https://example.com' }) },
    async (job, release) => {
      attempted.push(job.deliveryId);
      release();
      return { kind: 'done' };
    },
  );
  t.teardown(() => scheduler.stop());
  scheduler.start();
  const job = (deliveryId: string, dueAt: number) => ({ subscriptionId: 's', deliveryId, dueAt }) as unknown as PendingDelivery;
  scheduler.hold(job('later', now + 35 * 86_400_000));
  scheduler.hold(job('now', now));
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(attempted, ['now']);
  t.equal(scheduler.waitingForRetry, 1, 'the later one waits');
});
