import t from 'tap';
import type { WebhookDeliveryEvent } from '../../src/domain/webhookDelivery.ts';
import type { SubscriptionFields, WebhookSubscriptionEvent } from '../../src/domain/webhookSubscription.ts';
import { webhookSubscriptionsProjection } from '../../src/projections/webhookSubscriptions.ts';
import { WEBHOOK_SUBSCRIPTIONS, type WebhookSubscriptionDoc } from '../../src/readModels/webhookSubscriptions.ts';
import { projectEvents } from '../helpers/projectionSpec.ts';

const fields = (subscriptionId: string): SubscriptionFields => ({
  subscriptionId,
  teamId: 'team-1',
  siteId: 'site-1',
  label: `label ${subscriptionId}`,
  url: `https://example.com/${subscriptionId}`,
  eventTypes: ['outreach.reply_sent'],
  secretPrefix: 'svc_wh_abcd…',
  sealedSecret: 'sealed',
  createdByOauthClientId: subscriptionId === 'sub-b' ? 'client-1' : null,
});
const attempted = (subscriptionId: string, status: 'ok' | 'http_500', attemptedAt: string): WebhookDeliveryEvent => ({
  type: 'DeliveryAttempted',
  data: {
    subscriptionId,
    deliveryId: `d-${attemptedAt}`,
    attempt: 1,
    status,
    statusCode: status === 'ok' ? 200 : 500,
    error: null,
    durationMs: 5,
    attemptedAt,
    nextAttemptAt: null,
    workerId: 'w',
  },
});

const history: Array<WebhookSubscriptionEvent | WebhookDeliveryEvent> = [
  { type: 'SubscriptionCreated', data: { ...fields('sub-a'), createdAt: '2025-01-01T00:00:00.000Z' } },
  { type: 'SubscriptionCreated', data: { ...fields('sub-b'), createdAt: '2025-01-01T00:00:01.000Z' } },
  { type: 'SubscriptionCreated', data: { ...fields('sub-c'), createdAt: '2025-01-01T00:00:02.000Z' } },
  // sub-a fails once, then succeeds: the failure count goes back to 0.
  attempted('sub-a', 'http_500', '2025-01-01T00:01:00.000Z'),
  { type: 'DeliveryFailed', data: { subscriptionId: 'sub-a', deliveryId: 'd-1', attempts: 1, status: 'http_500', failedAt: '2025-01-01T00:01:00.000Z', consecutiveFailures: 1 } },
  attempted('sub-a', 'ok', '2025-01-01T00:02:00.000Z'),
  { type: 'DeliverySucceeded', data: { subscriptionId: 'sub-a', deliveryId: 'd-2', attempts: 1, deliveredAt: '2025-01-01T00:02:00.000Z' } },
  // sub-b fails ten times in a row and is disabled.
  attempted('sub-b', 'http_500', '2025-01-01T00:03:00.000Z'),
  { type: 'DeliveryFailed', data: { subscriptionId: 'sub-b', deliveryId: 'd-3', attempts: 6, status: 'http_500', failedAt: '2025-01-01T00:03:00.000Z', consecutiveFailures: 10 } },
  { type: 'SubscriptionAutoDisabled', data: { subscriptionId: 'sub-b', consecutiveFailures: 10, disabledAt: '2025-01-01T00:03:00.000Z' } },
  // sub-c is deleted; a late outcome of its last delivery does not bring it back.
  { type: 'SubscriptionDeleted', data: { subscriptionId: 'sub-c', siteId: 'site-1', deletedAt: '2025-01-01T00:04:00.000Z' } },
  attempted('sub-c', 'ok', '2025-01-01T00:04:01.000Z'),
];

const doc = (id: string, createdAt: string, rest: Partial<WebhookSubscriptionDoc>): WebhookSubscriptionDoc => ({
  id,
  team_id: 'team-1',
  site_id: 'site-1',
  label: `label ${id}`,
  url: `https://example.com/${id}`,
  secret_prefix: 'svc_wh_abcd…',
  event_types: ['outreach.reply_sent'],
  is_active: true,
  consecutive_failures: 0,
  created_by_oauth_client_id: null,
  created_at: createdAt,
  updated_at: createdAt,
  last_delivery_at: null,
  last_delivery_status: null,
  ...rest,
});

t.test('webhookSubscriptions projection: creations, delivery outcomes, auto-disable and deletion; replayed twice, the same documents', async (t) => {
  const p = await projectEvents(t, webhookSubscriptionsProjection, history);
  const expected = {
    [WEBHOOK_SUBSCRIPTIONS]: [
      doc('sub-a', '2025-01-01T00:00:00.000Z', { last_delivery_at: '2025-01-01T00:02:00.000Z', last_delivery_status: 'ok', consecutive_failures: 0 }),
      doc('sub-b', '2025-01-01T00:00:01.000Z', {
        created_by_oauth_client_id: 'client-1',
        last_delivery_at: '2025-01-01T00:03:00.000Z',
        last_delivery_status: 'http_500',
        consecutive_failures: 10,
        is_active: false,
        updated_at: '2025-01-01T00:03:00.000Z',
      }),
    ],
  };
  t.same(await p.documents(), expected, 'the documents the events describe; no secret, the deleted one gone');
  for (let round = 1; round <= 2; round++) {
    t.ok(await p.replay(), `round ${round}: the replay batch commits`);
    t.same(await p.documents(), expected, `round ${round}: identical documents`);
  }
});

t.test('webhookSubscriptions projection: a 2xx attempt alone (one record per attempt) resets the failure count', async (t) => {
  const p = await projectEvents(t, webhookSubscriptionsProjection, [
    { type: 'SubscriptionCreated', data: { ...fields('sub-a'), createdAt: '2025-01-01T00:00:00.000Z' } },
    attempted('sub-a', 'http_500', '2025-01-01T00:01:00.000Z'),
    { type: 'DeliveryFailed', data: { subscriptionId: 'sub-a', deliveryId: 'd-1', attempts: 1, status: 'http_500', failedAt: '2025-01-01T00:01:00.000Z', consecutiveFailures: 1 } },
    attempted('sub-a', 'ok', '2025-01-01T00:02:00.000Z'),
  ]);
  t.same(await p.documents(), {
    [WEBHOOK_SUBSCRIPTIONS]: [doc('sub-a', '2025-01-01T00:00:00.000Z', { last_delivery_at: '2025-01-01T00:02:00.000Z', last_delivery_status: 'ok', consecutive_failures: 0 })],
  });
});
