import type { WebhookEventType } from '../domain/eventCatalog.ts';
import type { WebhookDeliveryEvent } from '../domain/webhookDelivery.ts';
import type { WebhookSubscriptionEvent } from '../domain/webhookSubscription.ts';
import type { RecordedEvent } from '../ports/eventStore.ts';
import { type Projection, handles } from './projection.ts';

/** The `webhookSubscriptions` read model: the spec's subscription object plus what the engine needs. */
export interface WebhookSubscriptionDoc {
  [key: string]: unknown;
  id: string;
  team_id: string;
  site_id: string;
  label: string;
  url: string;
  secret_prefix: string;
  event_types: WebhookEventType[];
  is_active: boolean;
  consecutive_failures: number;
  created_by_oauth_client_id: string | null;
  created_at: string;
  updated_at: string;
  last_delivery_at: string | null;
  last_delivery_status: string | null;
}

export const webhookSubscriptionsProjection: Projection = {
  name: 'webhookSubscriptions',
  // v2: delivery outcomes (is_active, consecutive_failures, last_delivery_*) from the deliveries streams.
  version: 2,
  collections: ['webhookSubscriptions'],
  canHandle: handles([
    'SubscriptionCreated',
    'SubscriptionDeleted',
    'DeliveryAttempted',
    'DeliverySucceeded',
    'DeliveryFailed',
    'SubscriptionAutoDisabled',
  ]),
  async handle(recorded, w) {
    const event = recorded as RecordedEvent & (WebhookSubscriptionEvent | WebhookDeliveryEvent);
    switch (event.type) {
      case 'SubscriptionCreated': {
        const d = event.data;
        const doc: WebhookSubscriptionDoc = {
          id: d.subscriptionId,
          team_id: d.teamId,
          site_id: d.siteId,
          label: d.label,
          url: d.url,
          secret_prefix: d.secretPrefix,
          event_types: d.eventTypes,
          is_active: true,
          consecutive_failures: 0,
          created_by_oauth_client_id: d.createdByOauthClientId,
          created_at: d.createdAt,
          updated_at: d.createdAt,
          last_delivery_at: null,
          last_delivery_status: null,
        };
        return w.put('webhookSubscriptions', doc);
      }
      case 'SubscriptionDeleted':
        return w.remove('webhookSubscriptions', event.data.subscriptionId);
      case 'DeliveryAttempted':
      case 'DeliverySucceeded':
      case 'DeliveryFailed':
      case 'SubscriptionAutoDisabled': {
        const doc = await w.get<WebhookSubscriptionDoc>('webhookSubscriptions', event.data.subscriptionId);
        if (!doc) return;
        if (event.type === 'DeliveryAttempted') {
          // The dashboard shows the last attempt's outcome, so a failing endpoint shows up while it is retried.
          doc.last_delivery_at = event.data.attemptedAt;
          doc.last_delivery_status = event.data.status;
        } else if (event.type === 'DeliverySucceeded') doc.consecutive_failures = 0;
        else if (event.type === 'DeliveryFailed') doc.consecutive_failures = event.data.consecutiveFailures;
        else {
          doc.is_active = false;
          doc.updated_at = event.data.disabledAt;
        }
        return w.put('webhookSubscriptions', doc);
      }
    }
  },
};
