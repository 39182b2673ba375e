import type { WebhookEventType } from '../domain/eventCatalog.ts';
import type { SubscriptionFields } from '../domain/webhookSubscription.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `webhookSubscriptions` read model, written by the webhookSubscriptions projection. */
export const WEBHOOK_SUBSCRIPTIONS = 'webhookSubscriptions';

/** The spec's subscription object plus what the engine needs. */
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

/**
 * A new subscription's document, from its SubscriptionCreated facts: the one mapping the
 * projection stores and the create endpoint answers with.
 */
export function subscriptionDocOf(created: SubscriptionFields & { createdAt: string }): WebhookSubscriptionDoc {
  return {
    id: created.subscriptionId,
    team_id: created.teamId,
    site_id: created.siteId,
    label: created.label,
    url: created.url,
    secret_prefix: created.secretPrefix,
    event_types: created.eventTypes,
    is_active: true,
    consecutive_failures: 0,
    created_by_oauth_client_id: created.createdByOauthClientId,
    created_at: created.createdAt,
    updated_at: created.createdAt,
    last_delivery_at: null,
    last_delivery_status: null,
  };
}

export const getSubscription = (store: ReadModelStore, subscriptionId: string) => store.get<WebhookSubscriptionDoc>(WEBHOOK_SUBSCRIPTIONS, subscriptionId);

/** The site's subscriptions, by id (the API's order) or by creation time (the dashboard's). */
export const listSubscriptionsForSite = (store: ReadModelStore, siteId: string, order: { sortBy: 'id' | 'created_at' } = { sortBy: 'id' }) =>
  store.find<WebhookSubscriptionDoc>(WEBHOOK_SUBSCRIPTIONS, { site_id: siteId }, order);

/** Subscriptions created with a token of this OAuth client. */
export const listSubscriptionsCreatedByClient = (store: ReadModelStore, clientId: string) =>
  store.find<WebhookSubscriptionDoc>(WEBHOOK_SUBSCRIPTIONS, { created_by_oauth_client_id: clientId });
