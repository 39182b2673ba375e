import t from 'tap';
import { bearer } from '../helpers/testApp.ts';
import { messageReceived, sleep, startHarness, startReceiver } from './helpers.ts';

/**
 * A delivery waiting for its retry when its subscription stops taking the event's type (a PATCH of
 * `eventTypes`, here with a new `url`, which may be another system) is abandoned, not sent: "A
 * subscription receives only the types it chose". It went to the new URL.
 */
t.test('PATCH {url, eventTypes} while a message_received delivery waits for its retry', async (t) => {
  const h = await startHarness({ env: { WEBHOOK_RETRY_BASE_MS: '800', WEBHOOK_RETRY_FACTOR: '1' } });
  t.teardown(() => h.close());
  const oldEndpoint = await startReceiver(() => 500);
  t.teardown(() => oldEndpoint.close());
  const newEndpoint = await startReceiver(() => 200);
  t.teardown(() => newEndpoint.close());
  const sub = await h.subscribe(oldEndpoint.url, ['outreach.message_received']);
  await h.append(messageReceived(h.tenant, 1));
  await oldEndpoint.waitFor((r) => r.length >= 1);

  const res = await h.app.fastify.inject({
    method: 'PATCH',
    url: `/api/v1/sites/${h.tenant.siteId}/outreach/webhooks/${sub.id}`,
    headers: bearer(h.tenant.key),
    payload: { url: newEndpoint.url, eventTypes: ['outreach.reply_sent'] },
  });
  t.equal(res.statusCode, 200);
  const abandoned = async () => (await h.app.services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'DeliveryAbandoned');
  const until = Date.now() + 10_000;
  while ((await abandoned()).length === 0 && Date.now() < until) await sleep(50);
  t.match((await abandoned()).map((e) => e.data), [{ subscriptionId: sub.id, reason: 'event_type_removed' }], 'the retry is abandoned');
  t.same(newEndpoint.received.map((r) => r.json.type), [], 'the new URL got nothing');
  t.equal(oldEndpoint.received.length, 1, 'nor did the old one again');
});
