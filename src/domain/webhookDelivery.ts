import type { WebhookEventType } from './eventCatalog.ts';
import { type OutreachEvent, type OutreachEventType, WEBHOOK_TYPE_OF } from './outreachEvents.ts';

/**
 * Webhook deliveries as facts. Every delivery to one subscription lives in that subscription's
 * stream `webhook_deliveries-<subscriptionId>`, so the order of outcomes there is the order that
 * counts `consecutive_failures`, and deleting the subscription's history is deleting one stream.
 * Pure: time, randomness and ids come in as arguments.
 */
export const deliveriesStream = (subscriptionId: string) => `webhook_deliveries-${subscriptionId}`;
export const DELIVERIES_STREAM_PREFIX = 'webhook_deliveries-';

/** How many failed deliveries in a row disable a subscription (spec: Limits). */
export const AUTO_DISABLE_THRESHOLD = 10;

/**
 * `last_delivery_status` values. `ok` is the spec's; the failures are ours:
 * - `http_<code>`: the endpoint answered with a non-2xx status (3xx included: redirects are never followed)
 * - `timeout`: no status line within the response timeout (10 s by default)
 * - `network_error`: DNS failure, connection refused or reset, or any other transport error
 * - `tls_error`: the TLS handshake failed (untrusted or mismatched certificate)
 * - `blocked_destination`: the URL is not HTTPS or resolves to a refused address range
 */
export type DeliveryStatus = 'ok' | `http_${number}` | 'timeout' | 'network_error' | 'tls_error' | 'blocked_destination';

export interface DeliveryScheduledData {
  subscriptionId: string;
  /** The source event's id: unique within the subscription's deliveries stream. */
  deliveryId: string;
  /** Global position of the source event, as a decimal string. */
  sourcePosition: string;
  eventType: WebhookEventType;
  /** The envelope id, identical on every attempt. */
  webhookId: string;
  /** The exact body bytes (UTF-8) sent and signed on every attempt. */
  body: string;
  scheduledAt: string;
  /** Epoch ms at which the first attempt is due. */
  dueAt: number;
  workerId: string;
}

export interface DeliveryAttemptedData {
  subscriptionId: string;
  deliveryId: string;
  /** 1 for the first attempt, up to 1 + the retry count. */
  attempt: number;
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: string;
  /** Epoch ms of the next attempt, or null when this attempt ended the delivery. */
  nextAttemptAt: number | null;
  workerId: string;
}

export type WebhookDeliveryEvent =
  | { type: 'DeliveryScheduled'; data: DeliveryScheduledData }
  | { type: 'DeliveryAttempted'; data: DeliveryAttemptedData }
  | { type: 'DeliverySucceeded'; data: { subscriptionId: string; deliveryId: string; attempts: number; deliveredAt: string } }
  | {
      type: 'DeliveryFailed';
      data: { subscriptionId: string; deliveryId: string; attempts: number; status: DeliveryStatus; failedAt: string; consecutiveFailures: number };
    }
  | { type: 'DeliveryAbandoned'; data: { subscriptionId: string; deliveryId: string; reason: 'subscription_disabled'; abandonedAt: string } }
  | { type: 'SubscriptionAutoDisabled'; data: { subscriptionId: string; consecutiveFailures: number; disabledAt: string } };

export const DELIVERY_EVENT_TYPES = [
  'DeliveryScheduled',
  'DeliveryAttempted',
  'DeliverySucceeded',
  'DeliveryFailed',
  'DeliveryAbandoned',
  'SubscriptionAutoDisabled',
] as const satisfies ReadonlyArray<WebhookDeliveryEvent['type']>;

export const isOutreachEventType = (type: string): type is OutreachEventType => Object.hasOwn(WEBHOOK_TYPE_OF, type);

/** The spec's `data` fields per event, in the spec's order: nothing more, nothing less. */
export function webhookData(event: OutreachEvent): Record<string, unknown> {
  switch (event.type) {
    case 'OpportunityCreated': {
      const d = event.data;
      return { opportunityId: d.opportunityId, conversationId: d.conversationId, entrySource: d.entrySource };
    }
    case 'MessageReceived': {
      const d = event.data;
      return { conversationId: d.conversationId, opportunityId: d.opportunityId, messageId: d.messageId, entrySource: d.entrySource };
    }
    case 'ReplySent': {
      const d = event.data;
      return {
        conversationId: d.conversationId,
        messageId: d.messageId,
        mailProviderMessageId: d.mailProviderMessageId,
        triage: d.triage,
        autoResolved: d.autoResolved,
        sendOutcome: d.sendOutcome,
      };
    }
    case 'ConversationStatusChanged': {
      const d = event.data;
      return { conversationId: d.conversationId, oldStatus: d.oldStatus, newStatus: d.newStatus, resolvedBy: d.resolvedBy, resolutionOutcome: d.resolutionOutcome };
    }
    case 'ContactSuppressed': {
      const d = event.data;
      return { email: d.email, reason: d.reason, source: d.source, upgraded: d.upgraded };
    }
  }
}

/**
 * The envelope of one source event. The id is `<event_type>:<timestamp>:<suffix>` with the suffix
 * taken from the source event's id, so it is the same on every retry and after any restart.
 */
export function buildEnvelope(event: OutreachEvent, sourceEventId: string): { webhookId: string; eventType: WebhookEventType; body: string } {
  const eventType = WEBHOOK_TYPE_OF[event.type];
  const timestamp = event.data.occurredAt;
  const webhookId = `${eventType}:${timestamp}:${sourceEventId.replace(/-/g, '')}`;
  const envelope = { id: webhookId, type: eventType, siteId: event.data.siteId, teamId: event.data.teamId, timestamp, data: webhookData(event) };
  return { webhookId, eventType, body: JSON.stringify(envelope) };
}

export interface RetryPolicy {
  /** Retries after the first attempt (spec: 3). */
  maxRetries: number;
  /** Delay before the first retry, in ms. */
  baseMs: number;
  /** Each further retry waits this many times longer. */
  factor: number;
  /** Fraction (0..1) of each delay randomised either way. */
  jitter: number;
}

/** Delay before retry number `retry` (1-based): exponential backoff with symmetric jitter. */
export function retryDelayMs(retry: number, policy: RetryPolicy, random01: number): number {
  const nominal = policy.baseMs * policy.factor ** (retry - 1);
  return Math.max(0, Math.round(nominal * (1 + policy.jitter * (2 * random01 - 1))));
}

/** A delivery that has been scheduled and not yet ended, as folded from its stream. */
export interface PendingDelivery {
  deliveryId: string;
  subscriptionId: string;
  webhookId: string;
  eventType: WebhookEventType;
  body: string;
  sourcePosition: bigint;
  /** Attempts made so far. */
  attempts: number;
  /** Epoch ms the next attempt is due. */
  dueAt: number;
  /** Worker that last touched it, and when (epoch ms), for takeover of orphans. */
  workerId: string;
  lastActivityAt: number;
}

export interface DeliveriesState {
  consecutiveFailures: number;
  disabled: boolean;
  pending: Map<string, PendingDelivery>;
  /** Every delivery id scheduled in the stream, with its source position. */
  scheduled: Map<string, bigint>;
}

export const initialDeliveriesState = (): DeliveriesState => ({ consecutiveFailures: 0, disabled: false, pending: new Map(), scheduled: new Map() });

/** Folds one event of a deliveries stream into the state (mutates and returns it, for long streams). */
export function evolveDeliveries(state: DeliveriesState, event: WebhookDeliveryEvent): DeliveriesState {
  switch (event.type) {
    case 'DeliveryScheduled': {
      const d = event.data;
      const sourcePosition = BigInt(d.sourcePosition);
      state.scheduled.set(d.deliveryId, sourcePosition);
      state.pending.set(d.deliveryId, {
        deliveryId: d.deliveryId,
        subscriptionId: d.subscriptionId,
        webhookId: d.webhookId,
        eventType: d.eventType,
        body: d.body,
        sourcePosition,
        attempts: 0,
        dueAt: d.dueAt,
        workerId: d.workerId,
        lastActivityAt: Date.parse(d.scheduledAt),
      });
      return state;
    }
    case 'DeliveryAttempted': {
      const p = state.pending.get(event.data.deliveryId);
      if (p) {
        p.attempts = Math.max(p.attempts, event.data.attempt);
        if (event.data.nextAttemptAt !== null) p.dueAt = event.data.nextAttemptAt;
        p.workerId = event.data.workerId;
        p.lastActivityAt = Date.parse(event.data.attemptedAt);
      }
      return state;
    }
    case 'DeliverySucceeded':
      state.pending.delete(event.data.deliveryId);
      state.consecutiveFailures = 0;
      return state;
    case 'DeliveryFailed':
      state.pending.delete(event.data.deliveryId);
      state.consecutiveFailures += 1;
      return state;
    case 'DeliveryAbandoned':
      state.pending.delete(event.data.deliveryId);
      return state;
    case 'SubscriptionAutoDisabled':
      state.disabled = true;
      return state;
  }
}
