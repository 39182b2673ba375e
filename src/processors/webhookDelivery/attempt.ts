import type { DeliveryStatus, RetryPolicy } from '../../domain/webhookDelivery.ts';
import type { Clock } from '../../ports/clock.ts';
import type { DeliveryLedgers } from './deliveryLedger.ts';
import type { AfterAttempt, Job } from './scheduler.ts';
import type { WebhookSender } from './sender.ts';
import { signatureHeaderFor } from './signature.ts';
import type { Targets } from './targets.ts';

export interface AttemptDeps {
  targets: Targets;
  ledgers: DeliveryLedgers;
  sender: WebhookSender;
  clock: Clock;
  workerId: string;
  retry: RetryPolicy;
  random: () => number;
  /** False once the worker is stopping: an answer that arrives then is not recorded. */
  running(): boolean;
  onAttempt?: (status: DeliveryStatus) => void;
  log?: { error(obj: unknown, msg?: string): void };
}

/**
 * One delivery attempt and its record: sign the stored body, POST it, and hand the outcome to the
 * decider as `RecordAttempt` (through the subscription's ledger). The concurrency slot (`release`)
 * is given back as soon as the endpoint has answered: recording is batched per subscription and
 * needs no connection, and an attempt whose record is lost in a crash is simply made again (same
 * id and body).
 */
export async function attemptDelivery(deps: AttemptDeps, job: Job, release: () => void): Promise<AfterAttempt> {
  try {
    const target = deps.targets.get(job.subscriptionId);
    const ledger = deps.ledgers.of(job.subscriptionId);
    if (!target || ledger.deleted) return { kind: 'done' };
    // A retry for a subscription disabled since, or one that no longer takes the type (its new URL may be another system).
    const abandoned = !target.active || ledger.state.disabled ? 'subscription_disabled' : !target.eventTypes.has(job.eventType) ? 'event_type_removed' : null;
    if (abandoned) {
      const abandonedAt = deps.clock.now().toISOString();
      await ledger.handle({ type: 'AbandonDelivery', data: { subscriptionId: job.subscriptionId, deliveryId: job.deliveryId, reason: abandoned, abandonedAt } });
      return { kind: 'done' };
    }
    const body = Buffer.from(job.body, 'utf8');
    const startedAt = deps.clock.now();
    const headers = {
      'content-type': 'application/json',
      'service-signature': signatureHeaderFor(deps.targets.signingSecretsOf(target, startedAt.getTime()), body, Math.floor(startedAt.getTime() / 1000)),
      'service-event': job.eventType,
      'user-agent': 'outreach-integration-service-webhooks/1',
    };
    const outcome = await deps.sender.send(target.url, body, headers);
    deps.onAttempt?.(outcome.status);
    if (!deps.running()) return { kind: 'done' };
    release();
    const attempt = job.attempts + 1;
    const now = deps.clock.now();
    const recorded = await ledger.handle({
      type: 'RecordAttempt',
      data: { subscriptionId: job.subscriptionId, deliveryId: job.deliveryId, attempt, outcome, attemptedAt: now.toISOString(), workerId: deps.workerId, retry: deps.retry, random01: deps.random() },
    });
    if (recorded.some((e) => e.type === 'SubscriptionAutoDisabled')) {
      deps.targets.deactivate(job.subscriptionId);
      return { kind: 'subscriptionDisabled' };
    }
    const attempted = recorded[0];
    if (attempted?.type === 'DeliveryAttempted' && attempted.data.nextAttemptAt !== null)
      return { kind: 'retry', job: { ...job, attempts: attempt, dueAt: attempted.data.nextAttemptAt, workerId: deps.workerId, lastActivityAt: now.getTime() } };
    return { kind: 'done' };
  } catch (error) {
    // Recording failed (store unavailable): keep the job and try again shortly; the id stays the same.
    deps.log?.error({ err: error }, 'webhook delivery could not be recorded; retrying');
    if (deps.running()) return { kind: 'retry', job: { ...job, dueAt: deps.clock.now().getTime() + 1_000 } };
    return { kind: 'done' };
  }
}
