import t from 'tap';
import { WebhookDeliveryWorker, workerOptionsFrom } from '../../src/processors/webhookDelivery/worker.ts';
import { bearer } from '../helpers/testApp.ts';
import { messageReceived, sleep, startHarness, startReceiver } from './helpers.ts';

/**
 * A retry pending for subscription S when the worker stops; S is deleted while it is down and many
 * events follow; by the restart the retry is long due. The worker must read the deletion before it
 * resumes the retry: the receiver gets no further attempt.
 */
t.test('a due retry does not resume for a subscription deleted while the worker was down', async (t) => {
  const h = await startHarness({ env: { WEBHOOK_RETRY_BASE_MS: '1500', WEBHOOK_RETRY_FACTOR: '1', WEBHOOK_RETRY_JITTER: '0' } });
  t.teardown(() => h.close());
  const receiver = await startReceiver(() => 500);
  t.teardown(() => receiver.close());
  const sub = await h.subscribe(receiver.url, ['outreach.message_received']);
  await h.append(messageReceived(h.tenant, 1));
  await receiver.waitFor((r) => r.length >= 1, 30_000);
  await h.worker.stop();
  const before = receiver.received.length;

  const deleted = await h.app.fastify.inject({ method: 'DELETE', url: `/api/v1/sites/${h.tenant.siteId}/outreach/webhooks/${sub.id}`, headers: bearer(h.tenant.key) });
  t.equal(deleted.statusCode, 200, deleted.body);
  // Many events after the deletion: the catch-up takes several pages.
  for (let i = 0; i < 20; i++) {
    await Promise.all(Array.from({ length: 100 }, (_, j) => h.app.services.events.append(`test-${h.app.services.newId()}`, [{ type: 'SomethingElse', data: { i, j } }], 'any')));
  }
  await sleep(2_500); // the pending retry is due

  const worker = new WebhookDeliveryWorker(h.app.services, workerOptionsFrom(h.app.config));
  await worker.start();
  t.teardown(() => worker.stop());
  await sleep(4_000);
  t.equal(receiver.received.length, before, 'no attempt after the deletion');
});
