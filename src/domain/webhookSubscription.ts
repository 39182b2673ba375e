import { type Decider, assertNever } from './decider.ts';
import type { WebhookEventType } from './eventCatalog.ts';

export const subscriptionStream = (subscriptionId: string) => `webhook_subscription-${subscriptionId}`;

export interface SubscriptionFields {
  subscriptionId: string;
  teamId: string;
  siteId: string;
  label: string;
  url: string;
  eventTypes: WebhookEventType[];
  /** Leading part of the signing secret followed by an ellipsis. */
  secretPrefix: string;
  /** The signing secret sealed with the service key (AES-256-GCM); never returned after creation. */
  sealedSecret: string;
  createdByOauthClientId: string | null;
}

export type WebhookSubscriptionEvent =
  | { type: 'SubscriptionCreated'; data: SubscriptionFields & { createdAt: string } }
  | { type: 'SubscriptionDeleted'; data: { subscriptionId: string; siteId: string; deletedAt: string } };

export type WebhookSubscriptionCommand =
  | { type: 'CreateSubscription'; data: SubscriptionFields & { now: string } }
  | { type: 'DeleteSubscription'; data: { subscriptionId: string; siteId: string; now: string } };

export type WebhookSubscriptionState =
  | { status: 'none' }
  | { status: 'active' | 'deleted'; siteId: string };

export class SubscriptionRuleError extends Error {
  constructor(readonly reason: 'exists' | 'not_found') {
    super(reason === 'exists' ? 'subscription already exists' : 'subscription not found');
  }
}

export const webhookSubscriptionDecider: Decider<WebhookSubscriptionState, WebhookSubscriptionCommand, WebhookSubscriptionEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'SubscriptionCreated':
        return { status: 'active', siteId: event.data.siteId };
      case 'SubscriptionDeleted':
        return state.status === 'none' ? state : { ...state, status: 'deleted' };
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'CreateSubscription': {
        if (state.status !== 'none') throw new SubscriptionRuleError('exists');
        const { now, ...fields } = command.data;
        return [{ type: 'SubscriptionCreated', data: { ...fields, createdAt: now } }];
      }
      case 'DeleteSubscription':
        // A subscription of another site is as good as missing: the caller must not learn it exists.
        if (state.status !== 'active' || state.siteId !== command.data.siteId) throw new SubscriptionRuleError('not_found');
        return [
          {
            type: 'SubscriptionDeleted',
            data: { subscriptionId: command.data.subscriptionId, siteId: command.data.siteId, deletedAt: command.data.now },
          },
        ];
      default:
        return assertNever(command);
    }
  },
};
