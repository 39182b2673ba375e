import { toDomainEvent } from '../lib/parseEvent.ts';
import { WEBHOOK_SUBSCRIPTIONS, type WebhookSubscriptionDoc, subscriptionDocOf } from '../readModels/webhookSubscriptions.ts';
import { type Projection, handles } from './projection.ts';

/** Still imported from here by webhook tests that another change is moving. */

export const webhookSubscriptionsProjection: Projection = {
  name: 'webhookSubscriptions',
  // v2: delivery outcomes (is_active, consecutive_failures, last_delivery_*) from the deliveries streams.
  version: 2,
  collections: [WEBHOOK_SUBSCRIPTIONS],
  canHandle: handles([
    'SubscriptionCreated',
    'SubscriptionUpdated',
    'SubscriptionSecretRotated',
    'SubscriptionDeleted',
    'DeliveryAttempted',
    'DeliverySucceeded',
    'DeliveryFailed',
    'SubscriptionAutoDisabled',
  ]),
  async handle(recorded, w) {
    const event = toDomainEvent(recorded);
    if (!event) return;
    switch (event.type) {
      case 'SubscriptionCreated':
        return w.put(WEBHOOK_SUBSCRIPTIONS, subscriptionDocOf(event.data));
      case 'SubscriptionDeleted':
        return w.remove(WEBHOOK_SUBSCRIPTIONS, event.data.subscriptionId);
      case 'SubscriptionUpdated': {
        const doc = await w.get<WebhookSubscriptionDoc>(WEBHOOK_SUBSCRIPTIONS, event.data.subscriptionId);
        if (!doc) return;
        return w.put(WEBHOOK_SUBSCRIPTIONS, { ...doc, label: event.data.label, url: event.data.url, event_types: event.data.eventTypes, updated_at: event.data.updatedAt });
      }
      case 'SubscriptionSecretRotated': {
        const doc = await w.get<WebhookSubscriptionDoc>(WEBHOOK_SUBSCRIPTIONS, event.data.subscriptionId);
        if (!doc) return;
        return w.put(WEBHOOK_SUBSCRIPTIONS, { ...doc, secret_prefix: event.data.secretPrefix, updated_at: event.data.rotatedAt });
      }
      case 'DeliveryAttempted':
      case 'DeliverySucceeded':
      case 'DeliveryFailed':
      case 'SubscriptionAutoDisabled': {
        const doc = await w.get<WebhookSubscriptionDoc>(WEBHOOK_SUBSCRIPTIONS, event.data.subscriptionId);
        if (!doc) return;
        if (event.type === 'DeliveryAttempted') {
          // The dashboard shows the last attempt's outcome, so a failing endpoint shows up while it is retried.
          doc.last_delivery_at = event.data.attemptedAt;
          doc.last_delivery_status = event.data.status;
          // A 2xx attempt is the delivery's success.
          if (event.data.status === 'ok') doc.consecutive_failures = 0;
        } else if (event.type === 'DeliverySucceeded') doc.consecutive_failures = 0;
        else if (event.type === 'DeliveryFailed') doc.consecutive_failures = event.data.consecutiveFailures;
        else {
          doc.is_active = false;
          doc.updated_at = event.data.disabledAt;
        }
        return w.put(WEBHOOK_SUBSCRIPTIONS, doc);
      }
    }
  },
};
