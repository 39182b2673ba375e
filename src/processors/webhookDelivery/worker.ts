import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Config } from '../../config.ts';
import { parseAllowedRanges } from '../../domain/destination.ts';
import type { WebhookEventType } from '../../domain/eventCatalog.ts';
import type { OutreachEvent } from '../../domain/outreachEvents.ts';
import { WEBHOOK_TYPE_OF } from '../../domain/outreachEvents.ts';
import {
  type PendingDelivery,
  type RetryPolicy,
  type WebhookDeliveryEvent,
  buildEnvelope,
  deliveriesStream,
  isOutreachEventType,
  retryDelayMs,
} from '../../domain/webhookDelivery.ts';
import type { SubscriptionFields } from '../../domain/webhookSubscription.ts';
import { sleep } from '../../ports/catchUpSubscription.ts';
import type { Clock } from '../../ports/clock.ts';
import type { EventStore, RecordedEvent } from '../../ports/eventStore.ts';
import type { Document, ReadModelStore } from '../../ports/readModelStore.ts';
import type { SecretBox } from '../../ports/secretBox.ts';
import type { WebhookDeliveryDoc } from '../../projections/webhookDeliveries.ts';
import { DeliveryLedger } from './deliveryLedger.ts';
import { WebhookSender } from './sender.ts';
import { signatureHeader } from './signature.ts';

/** The worker's own checkpoint and its view of the subscriptions as of that checkpoint. */
export const DISPATCHER = 'webhookDispatcher';
const DISPATCHER_VERSION = 1;
const TARGETS = 'webhookDispatchTargets';
const PAGE = 500;

interface TargetDoc extends Document {
  site_id: string;
  url: string;
  event_types: string[];
  sealed_secret: string;
  active: boolean;
}

interface Target {
  id: string;
  siteId: string;
  url: string;
  eventTypes: Set<string>;
  sealedSecret: string;
  active: boolean;
}

interface Job extends PendingDelivery {}

interface Lane {
  queue: Job[];
  inFlight: number;
}

export interface WorkerOptions {
  workerId: string;
  timeoutMs: number;
  retry: RetryPolicy;
  concurrency: number;
  concurrencyPerSubscription: number;
  orphanAfterMs: number;
  /** Pause after each durable record append, to batch more records per fsync. */
  recordBatchMs?: number;
  allowedRanges?: string;
  extraCa?: string;
  random?: () => number;
  log?: { error(obj: unknown, msg?: string): void; warn?(obj: unknown, msg?: string): void };
}

export interface WorkerDeps {
  events: EventStore;
  readModels: ReadModelStore;
  secrets: SecretBox;
  clock: Clock;
}

/** Worker options from the service configuration (the table in docs/webhooks.md). */
export function workerOptionsFrom(config: Config): WorkerOptions {
  return {
    workerId: config.WEBHOOK_WORKER_ID ?? `${hostname()}`,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retry: { maxRetries: config.WEBHOOK_MAX_RETRIES, baseMs: config.WEBHOOK_RETRY_BASE_MS, factor: config.WEBHOOK_RETRY_FACTOR, jitter: config.WEBHOOK_RETRY_JITTER },
    concurrency: config.WEBHOOK_CONCURRENCY,
    concurrencyPerSubscription: config.WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION,
    orphanAfterMs: config.WEBHOOK_ORPHAN_AFTER_MS,
    recordBatchMs: config.WEBHOOK_RECORD_BATCH_MS,
    allowedRanges: config.WEBHOOK_ALLOWED_RANGES,
    extraCa: config.WEBHOOK_EXTRA_CA_FILE ? readFileSync(config.WEBHOOK_EXTRA_CA_FILE, 'utf8') : undefined,
  };
}

/**
 * The webhook subscriber process. It follows the global log from its own checkpoint and, for each
 * of the five domain facts, claims one delivery per matching active subscription by appending
 * `DeliveryScheduled` to that subscription's deliveries stream (compare-and-set, so several copies
 * never take the same event twice) before its checkpoint moves. Deliveries run with bounded
 * concurrency per subscription and overall; each attempt is recorded, retries are due times in the
 * stream (rebuilt at start), and deleting a subscription cancels its retries and erases its stream.
 */
export class WebhookDeliveryWorker {
  private readonly sender: WebhookSender;
  private readonly targets = new Map<string, Target>();
  private readonly bySite = new Map<string, Set<string>>();
  private readonly ledgers = new Map<string, DeliveryLedger>();
  private readonly secretsCache = new Map<string, string>();
  private readonly lanes = new Map<string, Lane>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Deliveries this process holds (queued, waiting for a retry, or in flight). */
  private readonly held = new Set<string>();
  private inFlight = 0;
  private checkpoint = -1n;
  private controller: AbortController | null = null;
  private loops: Promise<void>[] = [];
  private readonly random: () => number;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly options: WorkerOptions,
  ) {
    this.random = options.random ?? Math.random;
    this.sender = new WebhookSender({
      allowed: parseAllowedRanges(options.allowedRanges),
      extraCa: options.extraCa,
      timeoutMs: options.timeoutMs,
      connectionsPerOrigin: options.concurrencyPerSubscription,
    });
  }

  get position(): bigint {
    return this.checkpoint;
  }

  async start(): Promise<void> {
    if (this.controller) return;
    this.controller = new AbortController();
    await this.loadState();
    await this.recoverPending(true);
    const { signal } = this.controller;
    this.loops.push(this.dispatchLoop(signal), this.orphanLoop(signal));
  }

  async stop(): Promise<void> {
    this.controller?.abort();
    await Promise.all(this.loops);
    this.loops = [];
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const lane of this.lanes.values()) lane.queue = [];
    // Attempts cut short here are not recorded: they stay pending in the stream and resume at the next start.
    const deadline = Date.now() + 500;
    while (this.inFlight > 0 && Date.now() < deadline) await sleep(10);
    await this.sender.destroy().catch(() => {});
    while (this.inFlight > 0) await sleep(10);
    for (const ledger of this.ledgers.values()) await ledger.destroy().catch(() => {});
    this.controller = null;
  }

  /** Resolves when the dispatcher has passed `position` (for tests and the benchmark). */
  async waitForPosition(position: bigint, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.checkpoint < position) {
      if (Date.now() > deadline) return false;
      await sleep(5);
    }
    return true;
  }

  // ── dispatcher ───────────────────────────────────────────────────────────

  private async loadState(): Promise<void> {
    const stored = await this.deps.readModels.getCheckpoint(DISPATCHER);
    if (!stored || stored.version !== DISPATCHER_VERSION) {
      await this.deps.readModels.reset(DISPATCHER, [TARGETS]);
      this.checkpoint = -1n;
    } else this.checkpoint = stored.position;
    this.targets.clear();
    this.bySite.clear();
    for (const doc of await this.deps.readModels.find<TargetDoc>(TARGETS, {})) this.setTarget(fromDoc(doc));
  }

  private async dispatchLoop(signal: AbortSignal): Promise<void> {
    let backoff = 50;
    while (!signal.aborted) {
      try {
        const advanced = await this.dispatchPage();
        backoff = 50;
        if (!advanced) await this.deps.events.waitForNew(this.checkpoint, 1_000, signal);
      } catch (error) {
        this.options.log?.error({ err: error }, 'webhook dispatcher failed; retrying');
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 5_000);
      }
    }
  }

  /** One page of the global log. Returns false when there was nothing new. */
  async dispatchPage(): Promise<boolean> {
    const from = this.checkpoint;
    const page = await this.deps.events.readAll({ after: from, limit: PAGE });
    if (page.length === 0) return false;
    const to = page[page.length - 1]!.position;
    const writes: Array<{ position: bigint; id: string; doc: TargetDoc | null }> = [];
    const claims = new Map<string, WebhookDeliveryEvent[]>();
    const deleted: string[] = [];
    const now = this.deps.clock.now();
    for (const recorded of page) {
      const type = recorded.type;
      if (type === 'SubscriptionCreated') {
        const d = (recorded as unknown as RecordedEvent<string, SubscriptionFields>).data;
        const target: Target = { id: d.subscriptionId, siteId: d.siteId, url: d.url, eventTypes: new Set(d.eventTypes), sealedSecret: d.sealedSecret, active: true };
        this.setTarget(target);
        writes.push({ position: recorded.position, id: target.id, doc: toDoc(target) });
      } else if (type === 'SubscriptionDeleted') {
        const id = (recorded.data as { subscriptionId: string }).subscriptionId;
        this.removeTarget(id);
        deleted.push(id);
        claims.delete(id);
        writes.push({ position: recorded.position, id, doc: null });
      } else if (type === 'SubscriptionAutoDisabled') {
        const id = (recorded.data as { subscriptionId: string }).subscriptionId;
        const target = this.targets.get(id);
        if (target) {
          target.active = false;
          writes.push({ position: recorded.position, id, doc: toDoc(target) });
        }
      } else if (isOutreachEventType(type)) {
        const event = { type, data: recorded.data } as OutreachEvent;
        const subscribers = this.bySite.get(event.data?.siteId);
        if (!subscribers) continue;
        const eventType: WebhookEventType = WEBHOOK_TYPE_OF[event.type];
        let envelope: ReturnType<typeof buildEnvelope> | null = null;
        for (const id of subscribers) {
          const target = this.targets.get(id)!;
          if (!target.active || !target.eventTypes.has(eventType)) continue;
          envelope ??= buildEnvelope(event, recorded.id);
          let list = claims.get(id);
          if (!list) claims.set(id, (list = []));
          list.push({
            type: 'DeliveryScheduled',
            data: {
              subscriptionId: id,
              deliveryId: recorded.id,
              sourcePosition: recorded.position.toString(),
              eventType,
              webhookId: envelope.webhookId,
              body: envelope.body,
              scheduledAt: now.toISOString(),
              dueAt: now.getTime(),
              workerId: this.options.workerId,
            },
          });
        }
      }
    }

    // Claims are durable before the checkpoint moves past their events.
    const accepted: Job[] = [];
    await Promise.all(
      [...claims].map(async ([id, list]) => {
        const ledger = this.ledger(id);
        const results = await Promise.all(list.map((e) => ledger.write([e])));
        list.forEach((e, i) => {
          if (results[i] && e.type === 'DeliveryScheduled') accepted.push(jobFrom(e.data));
        });
      }),
    );

    // Claimed work starts now, whatever happens to the checkpoint step below.
    for (const job of accepted) if (this.targets.has(job.subscriptionId)) this.hold(job);
    // A deleted subscription's retries stop and its history goes before the checkpoint passes the deletion.
    for (const id of deleted) await this.erase(id);
    const moved = await this.deps.readModels.applyBatch(DISPATCHER, DISPATCHER_VERSION, from, to, async (writerAt) => {
      for (const w of writes) {
        if (w.doc) await writerAt(w.position).put(TARGETS, w.doc);
        else await writerAt(w.position).remove(TARGETS, w.id);
      }
    });
    if (moved) {
      this.checkpoint = to;
      for (const ledger of this.ledgers.values()) ledger.prune();
    } else {
      // Another copy moved the checkpoint first: take its view and go on from there.
      await this.loadState();
    }
    return true;
  }

  private setTarget(target: Target): void {
    this.targets.set(target.id, target);
    let set = this.bySite.get(target.siteId);
    if (!set) this.bySite.set(target.siteId, (set = new Set()));
    set.add(target.id);
  }

  private removeTarget(id: string): void {
    const target = this.targets.get(id);
    if (!target) return;
    this.targets.delete(id);
    this.bySite.get(target.siteId)?.delete(id);
    this.secretsCache.delete(id);
  }

  private ledger(subscriptionId: string): DeliveryLedger {
    let ledger = this.ledgers.get(subscriptionId);
    if (!ledger) {
      ledger = new DeliveryLedger(this.deps.events, subscriptionId, {
        now: () => this.deps.clock.now().toISOString(),
        checkpoint: () => this.checkpoint,
        onDisabled: (id) => void this.onDisabled(id),
        lingerMs: this.options.recordBatchMs,
      });
      this.ledgers.set(subscriptionId, ledger);
    }
    return ledger;
  }

  /** Deleting a subscription stops its pending retries and erases its delivery history. */
  private async erase(subscriptionId: string): Promise<void> {
    this.removeTarget(subscriptionId);
    this.cancelLocal(subscriptionId);
    const ledger = this.ledger(subscriptionId);
    await ledger.destroy();
    await this.deps.events.deleteStream?.(deliveriesStream(subscriptionId));
  }

  private async onDisabled(subscriptionId: string): Promise<void> {
    const target = this.targets.get(subscriptionId);
    if (target) target.active = false;
    this.cancelLocal(subscriptionId);
    const ledger = this.ledger(subscriptionId);
    const at = this.deps.clock.now().toISOString();
    for (const p of [...ledger.state.pending.values()]) {
      await ledger
        .write([{ type: 'DeliveryAbandoned', data: { subscriptionId, deliveryId: p.deliveryId, reason: 'subscription_disabled', abandonedAt: at } }])
        .catch((err) => this.options.log?.error({ err }, 'could not record an abandoned delivery'));
    }
  }

  private cancelLocal(subscriptionId: string): void {
    const prefix = `${subscriptionId}:`;
    for (const [key, timer] of this.timers) {
      if (key.startsWith(prefix)) {
        clearTimeout(timer);
        this.timers.delete(key);
        this.held.delete(key);
      }
    }
    const lane = this.lanes.get(subscriptionId);
    if (lane) {
      for (const job of lane.queue) this.held.delete(key(job));
      lane.queue = [];
    }
  }

  // ── recovery ─────────────────────────────────────────────────────────────

  /**
   * Pending deliveries from durable state: at start every active subscription's stream is folded
   * and its unfinished deliveries resumed (those of another worker copy only once they are orphaned).
   */
  private async recoverPending(atStart: boolean): Promise<void> {
    const now = this.deps.clock.now().getTime();
    for (const target of this.targets.values()) {
      if (!target.active) continue;
      const ledger = this.ledger(target.id);
      await ledger.load();
      for (const p of ledger.state.pending.values()) {
        const mine = p.workerId === this.options.workerId;
        const orphaned = now - Math.max(p.lastActivityAt, p.dueAt) > this.options.orphanAfterMs;
        if ((atStart && mine) || orphaned) this.hold({ ...p });
      }
    }
  }

  /** Takes over retries left behind by a worker copy that stopped (found through the read model). */
  private async orphanLoop(signal: AbortSignal): Promise<void> {
    const every = Math.max(1_000, Math.floor(this.options.orphanAfterMs / 2));
    while (!signal.aborted) {
      await sleep(every, signal);
      if (signal.aborted) return;
      try {
        const now = this.deps.clock.now().getTime();
        const docs = await this.deps.readModels.find<WebhookDeliveryDoc>('webhookDeliveries', { state: 'pending' });
        const stale = new Set<string>();
        for (const doc of docs) {
          const k = doc.id;
          if (this.held.has(k)) continue;
          const last = Math.max(Date.parse(doc.updated_at), doc.next_attempt_at ? Date.parse(doc.next_attempt_at) : 0);
          if (now - last > this.options.orphanAfterMs) stale.add(doc.subscription_id);
        }
        for (const id of stale) {
          const target = this.targets.get(id);
          if (!target?.active) continue;
          const ledger = this.ledger(id);
          await ledger.load();
          for (const p of ledger.state.pending.values()) {
            if (now - Math.max(p.lastActivityAt, p.dueAt) > this.options.orphanAfterMs) this.hold({ ...p });
          }
        }
      } catch (error) {
        this.options.log?.error({ err: error }, 'webhook orphan scan failed');
      }
    }
  }

  // ── delivery ─────────────────────────────────────────────────────────────

  private hold(job: Job): void {
    const k = key(job);
    if (this.held.has(k) || this.controller?.signal.aborted) return;
    this.held.add(k);
    const delay = job.dueAt - this.deps.clock.now().getTime();
    if (delay <= 0) this.enqueue(job);
    else
      this.timers.set(
        k,
        setTimeout(() => {
          this.timers.delete(k);
          this.enqueue(job);
        }, delay),
      );
  }

  private enqueue(job: Job): void {
    let lane = this.lanes.get(job.subscriptionId);
    if (!lane) this.lanes.set(job.subscriptionId, (lane = { queue: [], inFlight: 0 }));
    lane.queue.push(job);
    this.pump();
  }

  /** Starts queued deliveries, round-robin over subscriptions, within both concurrency bounds. */
  private pump(): void {
    let progressed = true;
    while (progressed && this.inFlight < this.options.concurrency) {
      progressed = false;
      for (const [id, lane] of this.lanes) {
        if (this.inFlight >= this.options.concurrency) break;
        if (lane.queue.length === 0) {
          if (lane.inFlight === 0) this.lanes.delete(id);
          continue;
        }
        if (lane.inFlight >= this.options.concurrencyPerSubscription) continue;
        const job = lane.queue.shift()!;
        lane.inFlight++;
        this.inFlight++;
        progressed = true;
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          lane.inFlight--;
          this.inFlight--;
          this.pump();
        };
        void this.attempt(job, release).finally(release);
      }
    }
  }

  /**
   * One attempt. The concurrency slot (`release`) is given back as soon as the endpoint has answered:
   * recording the outcome is batched per subscription and needs no connection, and an attempt
   * whose record is lost in a crash is simply made again (same id and body).
   */
  private async attempt(job: Job, release: () => void): Promise<void> {
    const k = key(job);
    let rescheduled = false;
    try {
      const target = this.targets.get(job.subscriptionId);
      const ledger = this.ledger(job.subscriptionId);
      if (!target || ledger.deleted) return;
      if (!target.active || ledger.state.disabled) {
        const at = this.deps.clock.now().toISOString();
        await ledger.write([{ type: 'DeliveryAbandoned', data: { subscriptionId: job.subscriptionId, deliveryId: job.deliveryId, reason: 'subscription_disabled', abandonedAt: at } }]);
        return;
      }
      const body = Buffer.from(job.body, 'utf8');
      const startedAt = this.deps.clock.now();
      const headers = {
        'content-type': 'application/json',
        'service-signature': signatureHeader(this.secretOf(target), body, Math.floor(startedAt.getTime() / 1000)),
        'service-event': job.eventType,
        'user-agent': 'outreach-integration-service-webhooks/1',
      };
      const outcome = await this.sender.send(target.url, body, headers);
      if (this.controller?.signal.aborted) return;
      release();
      const attempt = job.attempts + 1;
      const now = this.deps.clock.now();
      const retry = outcome.status !== 'ok' && attempt <= this.options.retry.maxRetries;
      const nextAttemptAt = retry ? now.getTime() + retryDelayMs(attempt, this.options.retry, this.random()) : null;
      const base = { subscriptionId: job.subscriptionId, deliveryId: job.deliveryId };
      const events: WebhookDeliveryEvent[] = [
        {
          type: 'DeliveryAttempted',
          data: { ...base, attempt, status: outcome.status, statusCode: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs, attemptedAt: now.toISOString(), nextAttemptAt, workerId: this.options.workerId },
        },
      ];
      if (outcome.status === 'ok') events.push({ type: 'DeliverySucceeded', data: { ...base, attempts: attempt, deliveredAt: now.toISOString() } });
      else if (!retry) events.push({ type: 'DeliveryFailed', data: { ...base, attempts: attempt, status: outcome.status, failedAt: now.toISOString(), consecutiveFailures: 0 } });
      const written = await ledger.write(events);
      if (written && retry && nextAttemptAt !== null) {
        this.held.delete(k);
        rescheduled = true;
        this.hold({ ...job, attempts: attempt, dueAt: nextAttemptAt, workerId: this.options.workerId, lastActivityAt: now.getTime() });
      }
    } catch (error) {
      // Recording failed (store unavailable): keep the job and try again shortly; the id stays the same.
      this.options.log?.error({ err: error }, 'webhook delivery could not be recorded; retrying');
      if (this.controller && !this.controller.signal.aborted) {
        this.held.delete(k);
        rescheduled = true;
        this.hold({ ...job, dueAt: this.deps.clock.now().getTime() + 1_000 });
      }
    } finally {
      if (!rescheduled) this.held.delete(k);
    }
  }

  private secretOf(target: Target): string {
    let secret = this.secretsCache.get(target.id);
    if (!secret) this.secretsCache.set(target.id, (secret = this.deps.secrets.open(target.sealedSecret)));
    return secret;
  }
}

const key = (job: { subscriptionId: string; deliveryId: string }) => `${job.subscriptionId}:${job.deliveryId}`;

function jobFrom(d: Extract<WebhookDeliveryEvent, { type: 'DeliveryScheduled' }>['data']): Job {
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

function toDoc(t: Target): TargetDoc {
  return { id: t.id, site_id: t.siteId, url: t.url, event_types: [...t.eventTypes], sealed_secret: t.sealedSecret, active: t.active };
}

function fromDoc(d: TargetDoc): Target {
  return { id: d.id, siteId: d.site_id, url: d.url, eventTypes: new Set(d.event_types), sealedSecret: d.sealed_secret, active: d.active };
}
