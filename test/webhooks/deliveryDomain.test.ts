import t from 'tap';
import {
  type WebhookDeliveryEvent,
  buildEnvelope,
  evolveDeliveries,
  initialDeliveriesState,
  retryDelayMs,
} from '../../src/domain/webhookDelivery.ts';
import type { OutreachEvent } from '../../src/domain/outreachEvents.ts';

const event: OutreachEvent = {
  type: 'ContactSuppressed',
  data: { siteId: 's1', teamId: 't1', occurredAt: 1_768_478_400_123, email: 'a@b.example', reason: 'opted_out', source: 'inbound_classifier', upgraded: true },
};

t.test('the envelope is a pure function of the event and its recorded id', async (t) => {
  const a = buildEnvelope(event, '7d0c1f6e-2b7a-4a53-9d4e-0f3b8c1a2e4d');
  const b = buildEnvelope(event, '7d0c1f6e-2b7a-4a53-9d4e-0f3b8c1a2e4d');
  t.equal(a.body, b.body, 'same bytes every time');
  t.equal(a.webhookId, 'outreach.contact_suppressed:1768478400123:7d0c1f6e2b7a4a539d4e0f3b8c1a2e4d');
  t.same(JSON.parse(a.body), {
    id: a.webhookId,
    type: 'outreach.contact_suppressed',
    siteId: 's1',
    teamId: 't1',
    timestamp: 1_768_478_400_123,
    data: { email: 'a@b.example', reason: 'opted_out', source: 'inbound_classifier', upgraded: true },
  });
  t.not(buildEnvelope(event, 'another-id').webhookId, a.webhookId, 'another recorded event, another id');
});

t.test('retry delays grow exponentially, jitter stays within its fraction', async (t) => {
  const policy = { maxRetries: 3, baseMs: 10_000, factor: 6, jitter: 0.2 };
  t.same([1, 2, 3].map((n) => retryDelayMs(n, policy, 0.5)), [10_000, 60_000, 360_000], 'nominal at the midpoint');
  t.equal(retryDelayMs(1, policy, 0), 8_000, 'lowest');
  t.equal(retryDelayMs(1, policy, 1), 12_000, 'highest');
  t.equal(retryDelayMs(2, { ...policy, jitter: 0 }, 0.9), 60_000, 'no jitter');
  t.equal(retryDelayMs(2, { ...policy, baseMs: 86_400_000, factor: 25 }, 0.5), 2 ** 31 - 1, 'at most the longest timer (a longer one fires at once)');
});

t.test('folding a deliveries stream: pending work, the failure count, the disable', async (t) => {
  const s = { subscriptionId: 'sub', workerId: 'w' };
  const scheduled = (id: string): WebhookDeliveryEvent => ({
    type: 'DeliveryScheduled',
    data: { ...s, deliveryId: id, sourcePosition: '5', eventType: 'outreach.reply_sent', webhookId: `x:${id}`, body: '{}', scheduledAt: '2026-01-15T12:00:00.000Z', dueAt: 1 },
  });
  const attempted = (id: string, attempt: number, next: number | null): WebhookDeliveryEvent => ({
    type: 'DeliveryAttempted',
    data: { ...s, deliveryId: id, attempt, status: 'http_500', statusCode: 500, error: null, durationMs: 3, attemptedAt: '2026-01-15T12:00:01.000Z', nextAttemptAt: next },
  });
  const failed = (id: string): WebhookDeliveryEvent => ({
    type: 'DeliveryFailed',
    data: { subscriptionId: 'sub', deliveryId: id, attempts: 4, status: 'http_500', failedAt: '2026-01-15T12:00:09.000Z', consecutiveFailures: 0 },
  });
  let state = initialDeliveriesState();
  for (const e of [scheduled('a'), attempted('a', 1, 99), scheduled('b'), attempted('a', 2, 199)]) state = evolveDeliveries(state, e);
  t.same([...state.pending.keys()], ['a', 'b']);
  t.equal(state.pending.get('a')!.attempts, 2);
  t.equal(state.pending.get('a')!.dueAt, 199, 'the next due time survives in the stream');
  state = evolveDeliveries(state, failed('a'));
  t.same([...state.pending.keys()], ['b']);
  t.equal(state.consecutiveFailures, 1);
  state = evolveDeliveries(state, { type: 'DeliverySucceeded', data: { subscriptionId: 'sub', deliveryId: 'b', attempts: 1, deliveredAt: '2026-01-15T12:00:10.000Z' } });
  t.equal(state.consecutiveFailures, 0, 'a success resets the count');
  state = evolveDeliveries(state, { type: 'SubscriptionAutoDisabled', data: { subscriptionId: 'sub', consecutiveFailures: 10, disabledAt: '2026-01-15T12:00:11.000Z' } });
  t.equal(state.disabled, true);
});
