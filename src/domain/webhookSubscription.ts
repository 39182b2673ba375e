import { type Decider, assertNever } from './decider.ts';
import type { WebhookEventType } from './eventCatalog.ts';

export const subscriptionStream = (subscriptionId: string) => `webhook_subscription-${subscriptionId}`;

/** The longest grace period during which a rotated-out secret still signs deliveries (24 hours). */
export const MAX_ROTATION_GRACE_SECONDS = 86_400;

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

/** What an update may change. */
export interface SubscriptionChanges {
  label?: string;
  url?: string;
  eventTypes?: WebhookEventType[];
}

export type WebhookSubscriptionEvent =
  | { type: 'SubscriptionCreated'; data: SubscriptionFields & { createdAt: string } }
  | {
      type: 'SubscriptionUpdated';
      /** The subscription's label, url and event types after the update (all three, changed or not). */
      data: { subscriptionId: string; siteId: string; label: string; url: string; eventTypes: WebhookEventType[]; updatedAt: string };
    }
  | {
      type: 'SubscriptionSecretRotated';
      data: {
        subscriptionId: string;
        siteId: string;
        secretPrefix: string;
        sealedSecret: string;
        /** The secret it replaces, still signing (as a second `v1=`) until `previousSecretExpiresAt`; null when the grace is 0. */
        previousSealedSecret: string | null;
        previousSecretExpiresAt: string | null;
        rotatedAt: string;
      };
    }
  | { type: 'SubscriptionDeleted'; data: { subscriptionId: string; siteId: string; deletedAt: string } };

export type WebhookSubscriptionCommand =
  | { type: 'CreateSubscription'; data: SubscriptionFields & { now: string } }
  | { type: 'UpdateSubscription'; data: { subscriptionId: string; siteId: string; changes: SubscriptionChanges; now: string } }
  | {
      type: 'RotateSubscriptionSecret';
      data: { subscriptionId: string; siteId: string; secretPrefix: string; sealedSecret: string; graceSeconds: number; now: string };
    }
  | { type: 'DeleteSubscription'; data: { subscriptionId: string; siteId: string; now: string } };

export type WebhookSubscriptionState =
  | { status: 'none' }
  | {
      status: 'active' | 'deleted';
      siteId: string;
      label: string;
      url: string;
      eventTypes: WebhookEventType[];
      sealedSecret: string;
      /** Until when a rotated-out secret still signs (ISO 8601); null when none does. */
      graceUntil: string | null;
    };

export class SubscriptionRuleError extends Error {
  constructor(
    readonly reason: 'exists' | 'not_found' | 'invalid_grace' | 'grace_running',
    message?: string,
  ) {
    super(
      message ??
        (reason === 'exists' ? 'subscription already exists' : reason === 'not_found' ? 'subscription not found' : `graceSeconds must be 0 to ${MAX_ROTATION_GRACE_SECONDS}`),
    );
  }
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && new Set([...a, ...b]).size === a.length;

export const webhookSubscriptionDecider: Decider<WebhookSubscriptionState, WebhookSubscriptionCommand, WebhookSubscriptionEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'SubscriptionCreated': {
        const { siteId, label, url, eventTypes, sealedSecret } = event.data;
        return { status: 'active', siteId, label, url, eventTypes, sealedSecret, graceUntil: null };
      }
      case 'SubscriptionUpdated': {
        if (state.status === 'none') return state;
        const { label, url, eventTypes } = event.data;
        return { ...state, label, url, eventTypes };
      }
      case 'SubscriptionSecretRotated':
        return state.status === 'none' ? state : { ...state, sealedSecret: event.data.sealedSecret, graceUntil: event.data.previousSecretExpiresAt };
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
      case 'UpdateSubscription': {
        const { subscriptionId, siteId, changes, now } = command.data;
        // A subscription of another site is as good as missing: the caller must not learn it exists.
        if (state.status !== 'active' || state.siteId !== siteId) throw new SubscriptionRuleError('not_found');
        const label = changes.label ?? state.label;
        const url = changes.url ?? state.url;
        const eventTypes = changes.eventTypes ? [...new Set(changes.eventTypes)] : state.eventTypes;
        if (label === state.label && url === state.url && sameSet(eventTypes, state.eventTypes)) return [];
        return [{ type: 'SubscriptionUpdated', data: { subscriptionId, siteId, label, url, eventTypes, updatedAt: now } }];
      }
      case 'RotateSubscriptionSecret': {
        const { subscriptionId, siteId, secretPrefix, sealedSecret, graceSeconds, now } = command.data;
        if (state.status !== 'active' || state.siteId !== siteId) throw new SubscriptionRuleError('not_found');
        if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_ROTATION_GRACE_SECONDS) throw new SubscriptionRuleError('invalid_grace');
        const graceful = graceSeconds > 0;
        // One rotated-out secret signs at a time: a second graceful rotation would end the first one's
        // grace before the time its answer gave. A rotation with no grace ends every old secret at once.
        if (graceful && state.graceUntil !== null && Date.parse(now) < Date.parse(state.graceUntil)) {
          throw new SubscriptionRuleError(
            'grace_running',
            `The secret rotated out last still signs until ${state.graceUntil}; rotate again after that, or with graceSeconds 0 to stop every old secret now.`,
          );
        }
        return [
          {
            type: 'SubscriptionSecretRotated',
            data: {
              subscriptionId,
              siteId,
              secretPrefix,
              sealedSecret,
              previousSealedSecret: graceful ? state.sealedSecret : null,
              previousSecretExpiresAt: graceful ? new Date(Date.parse(now) + graceSeconds * 1000).toISOString() : null,
              rotatedAt: now,
            },
          },
        ];
      }
      case 'DeleteSubscription':
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
