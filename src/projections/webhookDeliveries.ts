import { toDomainEvent } from '../lib/parseEvent.ts';
import {
  WEBHOOK_DELIVERIES as DELIVERIES,
  WEBHOOK_DELIVERY_LIVE_SUBSCRIPTIONS as LIVE,
  type WebhookDeliveryDoc,
  deliveryDocId,
} from '../readModels/webhookDeliveries.ts';
import { type Projection, handles } from './projection.ts';

/** Still imported from here by the delivery worker and webhook tests, which another change is moving. */

export const webhookDeliveriesProjection: Projection = {
  name: 'webhookDeliveries',
  version: 1,
  collections: [DELIVERIES, LIVE],
  canHandle: handles(['SubscriptionCreated', 'SubscriptionDeleted', 'DeliveryScheduled', 'DeliveryAttempted', 'DeliverySucceeded', 'DeliveryFailed', 'DeliveryAbandoned']),
  async handle(recorded, w) {
    const event = toDomainEvent(recorded);
    if (!event) return;
    switch (event.type) {
      case 'SubscriptionCreated':
        return w.put(LIVE, { id: event.data.subscriptionId });
      case 'SubscriptionDeleted': {
        // Deleting a subscription deletes its delivery history.
        for (const doc of await w.find<WebhookDeliveryDoc>(DELIVERIES, { subscription_id: event.data.subscriptionId })) await w.remove(DELIVERIES, doc.id);
        return w.remove(LIVE, event.data.subscriptionId);
      }
      case 'DeliveryScheduled': {
        const d = event.data;
        if (!(await w.get(LIVE, d.subscriptionId))) return;
        const doc: WebhookDeliveryDoc = {
          id: deliveryDocId(d.subscriptionId, d.deliveryId),
          subscription_id: d.subscriptionId,
          webhook_id: d.webhookId,
          event_type: d.eventType,
          state: 'pending',
          attempts: [],
          next_attempt_at: new Date(d.dueAt).toISOString(),
          scheduled_at: d.scheduledAt,
          worker_id: d.workerId,
          updated_at: d.scheduledAt,
        };
        return w.put(DELIVERIES, doc);
      }
      case 'DeliveryAttempted':
      case 'DeliverySucceeded':
      case 'DeliveryFailed':
      case 'DeliveryAbandoned': {
        const id = deliveryDocId(event.data.subscriptionId, event.data.deliveryId);
        const doc = await w.get<WebhookDeliveryDoc>(DELIVERIES, id);
        if (!doc) return;
        if (event.type === 'DeliveryAttempted') {
          const d = event.data;
          if (!doc.attempts.some((a) => a.attempt === d.attempt)) {
            const attempt = { attempt: d.attempt, status: d.status, status_code: d.statusCode, error: d.error, duration_ms: d.durationMs, attempted_at: d.attemptedAt };
            doc.attempts = [...doc.attempts, attempt];
          }
          doc.next_attempt_at = d.nextAttemptAt === null ? null : new Date(d.nextAttemptAt).toISOString();
          doc.worker_id = d.workerId;
          doc.updated_at = d.attemptedAt;
          // A 2xx attempt is the success (older streams follow it with a DeliverySucceeded: same result).
          if (d.status === 'ok') doc.state = 'succeeded';
        } else {
          doc.state = event.type === 'DeliverySucceeded' ? 'succeeded' : event.type === 'DeliveryFailed' ? 'failed' : 'abandoned';
          doc.next_attempt_at = null;
          doc.updated_at = event.type === 'DeliverySucceeded' ? event.data.deliveredAt : event.type === 'DeliveryFailed' ? event.data.failedAt : event.data.abandonedAt;
        }
        return w.put(DELIVERIES, doc);
      }
    }
  },
};
