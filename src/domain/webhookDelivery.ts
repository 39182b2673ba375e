import { type Decider, assertNever } from './decider.ts';
import { ImmutableMap } from './immutableMap.ts';
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
export type AbandonReason = 'subscription_disabled' | 'event_type_removed';

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
  /** A retry not made: the subscription was disabled, or no longer takes the event's type (a PATCH of its `eventTypes`). */
  | { type: 'DeliveryAbandoned'; data: { subscriptionId: string; deliveryId: string; reason: AbandonReason; abandonedAt: string } }
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

/**
 * Whether subscribers hear of the event. The spec's catalog emits `outreach.reply_sent` when "the
 * agent sends a reply to the prospect": a person's reply (`senderType: 'user'`, through the
 * conversation actions) is not announced; its caller has the answer, and the conversation shows it.
 */
export const announced = (event: OutreachEvent): boolean => !(event.type === 'ReplySent' && event.data.senderType === 'user');

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

/**
 * The longest delay before a retry: the longest a timer waits (2^31 − 1 ms, about 24.8 days; Node
 * fires a longer one at once, so a steep backoff would end in retries without any wait).
 */
export const LONGEST_RETRY_DELAY_MS = 2 ** 31 - 1;

/** Delay before retry number `retry` (1-based): exponential backoff with symmetric jitter, at most LONGEST_RETRY_DELAY_MS. */
export function retryDelayMs(retry: number, policy: RetryPolicy, random01: number): number {
  const nominal = policy.baseMs * policy.factor ** (retry - 1);
  return Math.min(LONGEST_RETRY_DELAY_MS, Math.max(0, Math.round(nominal * (1 + policy.jitter * (2 * random01 - 1)))));
}

/** What one attempt came to, as the sender reports it. */
export interface AttemptOutcome {
  status: DeliveryStatus;
  statusCode: number | null;
  /** Short transport error description; never contains the body or headers. */
  error: string | null;
  durationMs: number;
}

/** A delivery that has been scheduled and not yet ended, as folded from its stream. */
export interface PendingDelivery {
  readonly deliveryId: string;
  readonly subscriptionId: string;
  readonly webhookId: string;
  readonly eventType: WebhookEventType;
  readonly body: string;
  readonly sourcePosition: bigint;
  /** Attempts made so far. */
  readonly attempts: number;
  /** Epoch ms the next attempt is due. */
  readonly dueAt: number;
  /** Worker that last touched it, and when (epoch ms), for takeover of orphans. */
  readonly workerId: string;
  readonly lastActivityAt: number;
}

export interface DeliveriesState {
  readonly consecutiveFailures: number;
  readonly disabled: boolean;
  readonly pending: ImmutableMap<PendingDelivery>;
  /** Every delivery id scheduled in the stream (the claims), with its source position. */
  readonly scheduled: ImmutableMap<bigint>;
}

export type WebhookDeliveryCommand =
  /** The claim: one delivery of a source event to one subscription. */
  | { type: 'ScheduleDelivery'; data: DeliveryScheduledData }
  | { type: 'RecordAttempt'; data: RecordAttemptData }
  | { type: 'AbandonDelivery'; data: { subscriptionId: string; deliveryId: string; reason: AbandonReason; abandonedAt: string } };

export interface RecordAttemptData {
  subscriptionId: string;
  deliveryId: string;
  /** 1 for the first attempt. */
  attempt: number;
  outcome: AttemptOutcome;
  attemptedAt: string;
  workerId: string;
  retry: RetryPolicy;
  /** A number in [0, 1) drawn by the caller: the jitter of the next retry's delay. */
  random01: number;
}

export const initialDeliveriesState = (): DeliveriesState => ({ consecutiveFailures: 0, disabled: false, pending: ImmutableMap.empty(), scheduled: ImmutableMap.empty() });

/** A delivery as it stands right after its claim. */
export function pendingFrom(d: DeliveryScheduledData): PendingDelivery {
  return {
    deliveryId: d.deliveryId,
    subscriptionId: d.subscriptionId,
    webhookId: d.webhookId,
    eventType: d.eventType,
    body: d.body,
    sourcePosition: BigInt(d.sourcePosition),
    attempts: 0,
    dueAt: d.dueAt,
    workerId: d.workerId,
    lastActivityAt: Date.parse(d.scheduledAt),
  };
}

/** Folds one event of a deliveries stream into a new state; the given state is left as it was. */
export function evolveDeliveries(state: DeliveriesState, event: WebhookDeliveryEvent): DeliveriesState {
  switch (event.type) {
    case 'DeliveryScheduled': {
      const pending = pendingFrom(event.data);
      return { ...state, scheduled: state.scheduled.set(pending.deliveryId, pending.sourcePosition), pending: state.pending.set(pending.deliveryId, pending) };
    }
    case 'DeliveryAttempted': {
      const d = event.data;
      // A 2xx attempt is the success itself (streams written before this rule add a DeliverySucceeded, which changes nothing more).
      if (d.status === 'ok') return { ...state, pending: state.pending.delete(d.deliveryId), consecutiveFailures: 0 };
      const p = state.pending.get(d.deliveryId);
      if (!p) return state;
      const attempted: PendingDelivery = {
        ...p,
        attempts: Math.max(p.attempts, d.attempt),
        dueAt: d.nextAttemptAt ?? p.dueAt,
        workerId: d.workerId,
        lastActivityAt: Date.parse(d.attemptedAt),
      };
      return { ...state, pending: state.pending.set(d.deliveryId, attempted) };
    }
    case 'DeliverySucceeded':
      return { ...state, pending: state.pending.delete(event.data.deliveryId), consecutiveFailures: 0 };
    case 'DeliveryFailed':
      return { ...state, pending: state.pending.delete(event.data.deliveryId), consecutiveFailures: state.consecutiveFailures + 1 };
    case 'DeliveryAbandoned':
      return { ...state, pending: state.pending.delete(event.data.deliveryId) };
    case 'SubscriptionAutoDisabled':
      return { ...state, disabled: true };
    default:
      return assertNever(event);
  }
}

/**
 * The delivery rules, on the stream's own order. Every command is idempotent: one that no longer
 * applies decides nothing (an empty list), which the caller reads as "refused".
 * - a claim of a delivery already in the stream is refused (one owner per event and subscription);
 * - every attempt is recorded as one `DeliveryAttempted`; a 2xx one ends the delivery as succeeded;
 * - the record of a delivery that is no longer pending is refused (another copy ended it);
 * - a failed attempt is retried while retries are left, at a due time kept in the stream;
 * - the failure that makes `AUTO_DISABLE_THRESHOLD` in a row disables the subscription and abandons
 *   its other pending deliveries, all in one decision (so one append: no crash can separate them).
 */
export function decideDelivery(command: WebhookDeliveryCommand, state: DeliveriesState): WebhookDeliveryEvent[] {
  switch (command.type) {
    case 'ScheduleDelivery':
      return state.scheduled.has(command.data.deliveryId) ? [] : [{ type: 'DeliveryScheduled', data: command.data }];
    case 'RecordAttempt':
      return state.pending.has(command.data.deliveryId) ? recordAttempt(command.data, state) : [];
    case 'AbandonDelivery':
      return state.pending.has(command.data.deliveryId) ? [{ type: 'DeliveryAbandoned', data: command.data }] : [];
    default:
      return assertNever(command);
  }
}

function recordAttempt(c: RecordAttemptData, state: DeliveriesState): WebhookDeliveryEvent[] {
  const { outcome, attempt, attemptedAt } = c;
  const base = { subscriptionId: c.subscriptionId, deliveryId: c.deliveryId };
  const retry = outcome.status !== 'ok' && attempt <= c.retry.maxRetries;
  const nextAttemptAt = retry ? Date.parse(attemptedAt) + retryDelayMs(attempt, c.retry, c.random01) : null;
  const events: WebhookDeliveryEvent[] = [
    {
      type: 'DeliveryAttempted',
      data: { ...base, attempt, status: outcome.status, statusCode: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs, attemptedAt, nextAttemptAt, workerId: c.workerId },
    },
  ];
  // A 2xx attempt ends the delivery by itself: one record per attempt (no separate DeliverySucceeded).
  if (outcome.status !== 'ok' && !retry) {
    const consecutiveFailures = state.consecutiveFailures + 1;
    events.push({ type: 'DeliveryFailed', data: { ...base, attempts: attempt, status: outcome.status, failedAt: attemptedAt, consecutiveFailures } });
    if (consecutiveFailures >= AUTO_DISABLE_THRESHOLD && !state.disabled) {
      events.push({ type: 'SubscriptionAutoDisabled', data: { subscriptionId: c.subscriptionId, consecutiveFailures, disabledAt: attemptedAt } });
      for (const p of state.pending.values()) {
        if (p.deliveryId === c.deliveryId) continue;
        events.push({ type: 'DeliveryAbandoned', data: { subscriptionId: c.subscriptionId, deliveryId: p.deliveryId, reason: 'subscription_disabled', abandonedAt: attemptedAt } });
      }
    }
  }
  return events;
}

/** One decider per deliveries stream (`webhook_deliveries-<subscriptionId>`). */
export const webhookDeliveryDecider: Decider<DeliveriesState, WebhookDeliveryCommand, WebhookDeliveryEvent> = {
  initialState: initialDeliveriesState,
  evolve: evolveDeliveries,
  decide: decideDelivery,
};

/**
 * Forgets claims that can no longer come twice: ended deliveries whose source event is at or
 * before the dispatcher's checkpoint. Not an event: it only bounds the state a worker keeps.
 */
export function forgetSettledClaims(state: DeliveriesState, checkpoint: bigint): DeliveriesState {
  let scheduled = state.scheduled;
  for (const [id, position] of state.scheduled) if (position <= checkpoint && !state.pending.has(id)) scheduled = scheduled.delete(id);
  return scheduled === state.scheduled ? state : { ...state, scheduled };
}

/** A pending delivery nobody has touched for `orphanAfterMs` past its due time: any copy may take it over. */
export const isOrphaned = (p: PendingDelivery, now: number, orphanAfterMs: number): boolean => now - Math.max(p.lastActivityAt, p.dueAt) > orphanAfterMs;
