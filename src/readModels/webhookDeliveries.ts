import type { DeliveryStatus } from '../domain/webhookDelivery.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `webhookDeliveries` read model, written by the webhookDeliveries projection. */
export const WEBHOOK_DELIVERIES = 'webhookDeliveries';
/** Subscriptions that exist, so deliveries recorded after a deletion do not bring history back. */
export const WEBHOOK_DELIVERY_LIVE_SUBSCRIPTIONS = 'webhookDeliveryLiveSubscriptions';

export interface DeliveryAttemptRecord {
  attempt: number;
  status: DeliveryStatus;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: string;
}

/** One document per (subscription, source event), for auditors and the CLI. */
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

/** Every delivery of one subscription, oldest scheduled first (ties by id). */
export async function listDeliveriesOfSubscription(store: ReadModelStore, subscriptionId: string): Promise<WebhookDeliveryDoc[]> {
  const docs = await store.find<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES, { subscription_id: subscriptionId });
  return docs.sort((a, b) => (a.scheduled_at < b.scheduled_at ? -1 : a.scheduled_at > b.scheduled_at ? 1 : a.id < b.id ? -1 : 1));
}

/** Deliveries with attempts remaining. */
export const listPendingDeliveries = (store: ReadModelStore) => store.find<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES, { state: 'pending' });
