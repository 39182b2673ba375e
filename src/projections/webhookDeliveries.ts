import type { DeliveryStatus, WebhookDeliveryEvent } from '../domain/webhookDelivery.ts';
import type { WebhookSubscriptionEvent } from '../domain/webhookSubscription.ts';
import type { RecordedEvent } from '../ports/eventStore.ts';
import { type Projection, handles } from './projection.ts';

export interface DeliveryAttemptRecord {
  attempt: number;
  status: DeliveryStatus;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: string;
}

/** The `webhookDeliveries` read model: one document per (subscription, source event), for auditors and the CLI. */
export interface WebhookDeliveryDoc {
  [key: string]: unknown;
  id: string;
  subscription_id: string;
  webhook_id: string;
  event_type: string;
  /** pending (attempts remain), succeeded, failed (retries used up) or abandoned (subscription disabled). */
  state: 'pending' | 'succeeded' | 'failed' | 'abandoned';
  attempts: DeliveryAttemptRecord[];
  next_attempt_at: string | null;
  scheduled_at: string;
  worker_id: string;
  /** ISO time of the last recorded activity, for takeover of orphaned retries. */
  updated_at: string;
}

export const deliveryDocId = (subscriptionId: string, deliveryId: string) => `${subscriptionId}:${deliveryId}`;

const DELIVERIES = 'webhookDeliveries';
/** Subscriptions that exist, so deliveries recorded after a deletion do not bring history back. */
const LIVE = 'webhookDeliveryLiveSubscriptions';

export const webhookDeliveriesProjection: Projection = {
  name: 'webhookDeliveries',
  version: 1,
  collections: [DELIVERIES, LIVE],
  canHandle: handles(['SubscriptionCreated', 'SubscriptionDeleted', 'DeliveryScheduled', 'DeliveryAttempted', 'DeliverySucceeded', 'DeliveryFailed', 'DeliveryAbandoned']),
  async handle(recorded, w) {
    const event = recorded as RecordedEvent & (WebhookSubscriptionEvent | WebhookDeliveryEvent);
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
