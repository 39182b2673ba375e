import t from 'tap';
import {
  type AttemptOutcome,
  type WebhookDeliveryCommand,
  type WebhookDeliveryEvent,
  forgetSettledClaims,
  isOrphaned,
  webhookDeliveryDecider as decider,
} from '../../src/domain/webhookDelivery.ts';
import { given } from '../helpers/givenWhenThen.ts';

const at = '2026-01-15T12:00:00.000Z';
const atMs = Date.parse(at);
const sub = { subscriptionId: 'sub' };
const policy = { maxRetries: 3, baseMs: 10_000, factor: 6, jitter: 0.2 };

const claim = (id: string, sourcePosition = '5'): WebhookDeliveryCommand => ({
  type: 'ScheduleDelivery',
  data: { ...sub, deliveryId: id, sourcePosition, eventType: 'outreach.reply_sent', webhookId: `x:${id}`, body: '{}', scheduledAt: at, dueAt: atMs, workerId: 'w1' },
});
const scheduled = (id: string, sourcePosition = '5'): WebhookDeliveryEvent => ({ type: 'DeliveryScheduled', data: (claim(id, sourcePosition) as Extract<WebhookDeliveryCommand, { type: 'ScheduleDelivery' }>).data });
const ok: AttemptOutcome = { status: 'ok', statusCode: 204, error: null, durationMs: 7 };
const http500: AttemptOutcome = { status: 'http_500', statusCode: 500, error: null, durationMs: 9 };
const record = (id: string, attempt: number, outcome: AttemptOutcome): WebhookDeliveryCommand => ({
  type: 'RecordAttempt',
  data: { ...sub, deliveryId: id, attempt, outcome, attemptedAt: at, workerId: 'w1', retry: policy, random01: 0.5 },
});
const attempted = (id: string, attempt: number, outcome: AttemptOutcome, nextAttemptAt: number | null): WebhookDeliveryEvent => ({
  type: 'DeliveryAttempted',
  data: { ...sub, deliveryId: id, attempt, status: outcome.status, statusCode: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs, attemptedAt: at, nextAttemptAt, workerId: 'w1' },
});
const failed = (id: string, consecutiveFailures: number): WebhookDeliveryEvent => ({
  type: 'DeliveryFailed',
  data: { ...sub, deliveryId: id, attempts: 4, status: 'http_500', failedAt: at, consecutiveFailures },
});
const abandoned = (id: string): WebhookDeliveryEvent => ({ type: 'DeliveryAbandoned', data: { ...sub, deliveryId: id, reason: 'subscription_disabled', abandonedAt: at } });
/** Nine deliveries scheduled and failed, then `open` still pending. */
const nineFailed = (...open: string[]) => [
  ...Array.from({ length: 9 }, (_, i) => [scheduled(`f${i}`), failed(`f${i}`, i + 1)]).flat(),
  ...open.map((id) => scheduled(id)),
];

t.test('a claim is taken once per delivery and subscription', async () => {
  given(decider, []).when(claim('a')).then([scheduled('a')]);
  given(decider, [scheduled('a')]).when(claim('a')).then([]);
  given(decider, [scheduled('a'), attempted('a', 1, ok, null), { type: 'DeliverySucceeded', data: { ...sub, deliveryId: 'a', attempts: 1, deliveredAt: at } }])
    .when(claim('a'))
    .then([]);
});

t.test('a 2xx ends the delivery as succeeded, in one record', async (t) => {
  const state = given(decider, [scheduled('a'), failed('x', 3)]).when(record('a', 1, ok)).then([attempted('a', 1, ok, null)]);
  t.notOk(state.pending.has('a'), 'no longer pending');
  t.equal(state.consecutiveFailures, 0, 'the failure count is reset');
  given(decider, [scheduled('a'), attempted('a', 1, ok, null)]).when(record('a', 2, ok)).then([]);
});

t.test('a stream written before the one-record rule (attempt + DeliverySucceeded) folds to the same state', async (t) => {
  const before = [scheduled('a'), scheduled('b'), failed('x', 3), attempted('a', 1, ok, null), { type: 'DeliverySucceeded', data: { ...sub, deliveryId: 'a', attempts: 1, deliveredAt: at } } as WebhookDeliveryEvent];
  const now = [scheduled('a'), scheduled('b'), failed('x', 3), attempted('a', 1, ok, null)];
  const fold = (events: WebhookDeliveryEvent[]) => events.reduce(decider.evolve, decider.initialState());
  const [x, y] = [fold(before), fold(now)];
  t.same([...x.pending.keys()], [...y.pending.keys()]);
  t.same([...x.scheduled.keys()], [...y.scheduled.keys()]);
  t.equal(x.consecutiveFailures, y.consecutiveFailures);
  t.equal(x.disabled, y.disabled);
});

t.test('a failure with retries left is retried at a due time kept in the stream', async (t) => {
  const state = given(decider, [scheduled('a')]).when(record('a', 1, http500)).then([attempted('a', 1, http500, atMs + 10_000)]);
  t.equal(state.pending.get('a')?.dueAt, atMs + 10_000);
  given(decider, [scheduled('a')]).when(record('a', 3, http500)).then([attempted('a', 3, http500, atMs + 360_000)]);
});

t.test('the last failure ends the delivery and counts one more consecutive failure', async () => {
  given(decider, [scheduled('a')])
    .when(record('a', 4, http500))
    .then([attempted('a', 4, http500, null), { type: 'DeliveryFailed', data: { ...sub, deliveryId: 'a', attempts: 4, status: 'http_500', failedAt: at, consecutiveFailures: 1 } }]);
});

t.test('the tenth failure in a row disables the subscription and abandons its other pending deliveries', async (t) => {
  const state = given(decider, nineFailed('a', 'b', 'c'))
    .when(record('b', 4, http500))
    .then([
      attempted('b', 4, http500, null),
      failed('b', 10),
      { type: 'SubscriptionAutoDisabled', data: { ...sub, consecutiveFailures: 10, disabledAt: at } },
      abandoned('a'),
      abandoned('c'),
    ]);
  t.equal(state.disabled, true);
  t.equal(state.pending.size, 0, 'nothing left to send');
  given(decider, [...nineFailed('a', 'b'), scheduled('x'), failed('x', 10), { type: 'SubscriptionAutoDisabled', data: { ...sub, consecutiveFailures: 10, disabledAt: at } }])
    .when(record('a', 4, http500))
    .then([attempted('a', 4, http500, null), failed('a', 11)]);
});

t.test('records and abandons of a delivery that is no longer pending are refused', async () => {
  given(decider, [scheduled('a'), failed('a', 1)]).when(record('a', 4, http500)).then([]);
  given(decider, []).when(record('a', 1, ok)).then([]);
  const abandon: WebhookDeliveryCommand = { type: 'AbandonDelivery', data: { ...sub, deliveryId: 'a', reason: 'subscription_disabled', abandonedAt: at } };
  given(decider, [scheduled('a')]).when(abandon).then([abandoned('a')]);
  given(decider, [scheduled('a'), abandoned('a')]).when(abandon).then([]);
});

t.test('evolve leaves the state it was given as it was', async (t) => {
  const before = decider.evolve(decider.initialState(), scheduled('a'));
  const after = decider.evolve(before, failed('a', 1));
  t.equal(before.pending.size, 1);
  t.equal(before.consecutiveFailures, 0);
  t.equal(after.pending.size, 0);
  t.equal(after.consecutiveFailures, 1);
  const attemptedOnce = decider.evolve(before, attempted('a', 1, http500, atMs + 5));
  t.equal(before.pending.get('a')!.attempts, 0, 'the earlier pending delivery is untouched');
  t.equal(attemptedOnce.pending.get('a')!.attempts, 1);
});

t.test('settled claims at or before the checkpoint are forgotten; pending ones and later ones are kept', async (t) => {
  const state = [scheduled('old', '3'), failed('old', 1), scheduled('open', '4'), scheduled('done-later', '9'), failed('done-later', 2)].reduce(decider.evolve, decider.initialState());
  const pruned = forgetSettledClaims(state, 5n);
  t.same([...pruned.scheduled.keys()], ['open', 'done-later']);
  t.equal(state.scheduled.size, 3, 'the given state is untouched');
  t.equal(forgetSettledClaims(pruned, 5n), pruned, 'nothing to forget: the same state');
});

t.test('a pending delivery is orphaned once untouched for the takeover time past its due time', async (t) => {
  const p = decider.evolve(decider.initialState(), scheduled('a')).pending.get('a')!;
  t.notOk(isOrphaned(p, atMs + 60_000, 60_000));
  t.ok(isOrphaned(p, atMs + 60_001, 60_000));
});
