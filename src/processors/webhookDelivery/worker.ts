import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Config } from '../../config.ts';
import { parseAllowedRanges } from '../../domain/destination.ts';
import type { DeliveryStatus, RetryPolicy } from '../../domain/webhookDelivery.ts';
import { sleep } from '../../lib/sleep.ts';
import type { Clock } from '../../ports/clock.ts';
import type { EventStore } from '../../ports/eventStore.ts';
import type { CounterStore } from '../../ports/counterStore.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import type { SecretBox } from '../../ports/secretBox.ts';
import type { ProjectionRunner } from '../../projections/projectionRunner.ts';
import { attemptDelivery } from './attempt.ts';
import { DeliveryLedgers } from './deliveryLedger.ts';
import { DepartedApps } from './departedApps.ts';
import { Dispatcher } from './dispatcher.ts';
import { Recovery } from './recovery.ts';
import { type Place, Scheduler } from './scheduler.ts';
import { WebhookSender } from './sender.ts';
import { Targets } from './targets.ts';
import { TakeoverClaims } from './takeoverClaims.ts';
import { WorkerLiveness } from './workerLiveness.ts';

export interface WorkerOptions {
  workerId: string;
  timeoutMs: number;
  retry: RetryPolicy;
  concurrency: number;
  concurrencyPerSubscription: number;
  concurrencyPerTeam: number;
  /** Connections per destination origin, and so attempts in flight to it. */
  connectionsPerDestination: number;
  orphanAfterMs: number;
  /** Hold attempts while this copy's beats do not reach the counter store (a store shared across hosts: MongoDB); see Recovery. */
  fenceWhenSilent?: boolean;
  /** Pause after each durable record append, to batch more records per fsync. */
  recordBatchMs?: number;
  allowedRanges?: string;
  extraCa?: string;
  random?: () => number;
  /** Told each attempt's outcome (metrics). */
  onAttempt?: (status: DeliveryStatus) => void;
  log?: { error(obj: unknown, msg?: string): void; warn?(obj: unknown, msg?: string): void };
  /** Called once `stop` has drained and written everything (the worker's name is then free: see claimWorkerIdentity). */
  onStopped?: () => void;
}

export interface WorkerDeps {
  events: EventStore;
  readModels: ReadModelStore;
  secrets: SecretBox;
  clock: Clock;
  /** Shared by every copy: each beats there, so a copy takes over only the deliveries of a silent one (workerLiveness.ts). */
  counters: Pick<CounterStore, 'increment' | 'range'>;
  /** With these, the worker also deletes the subscriptions of departed people's apps (departedApps.ts). */
  departedApps?: { projections: Pick<ProjectionRunner, 'waitFor'>; newId(): string };
}

/** The origin whose pooled connections a URL's deliveries share (the URL itself when it does not parse). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** Worker options from the service configuration (the table in docs/webhooks.md). */
export function workerOptionsFrom(config: Config): WorkerOptions {
  return {
    workerId: config.WEBHOOK_WORKER_ID ?? `${hostname()}`,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retry: { maxRetries: config.WEBHOOK_MAX_RETRIES, baseMs: config.WEBHOOK_RETRY_BASE_MS, factor: config.WEBHOOK_RETRY_FACTOR, jitter: config.WEBHOOK_RETRY_JITTER },
    concurrency: config.WEBHOOK_CONCURRENCY,
    concurrencyPerSubscription: config.WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION,
    concurrencyPerTeam: config.WEBHOOK_CONCURRENCY_PER_TEAM,
    connectionsPerDestination: config.WEBHOOK_CONNECTIONS_PER_DESTINATION,
    orphanAfterMs: config.WEBHOOK_ORPHAN_AFTER_MS,
    fenceWhenSilent: config.MONGODB_URL !== undefined,
    recordBatchMs: config.WEBHOOK_RECORD_BATCH_MS,
    allowedRanges: config.WEBHOOK_ALLOWED_RANGES,
    extraCa: config.WEBHOOK_EXTRA_CA_FILE ? readFileSync(config.WEBHOOK_EXTRA_CA_FILE, 'utf8') : undefined,
  };
}

/**
 * The webhook subscriber process, put together: the dispatcher claims deliveries from the log,
 * the scheduler runs them when due within the concurrency bounds, each attempt is made and
 * recorded through the subscription's ledger (decided by `domain/webhookDelivery.ts`), and
 * recovery resumes pending deliveries from the streams at start and takes over orphans.
 */
export class WebhookDeliveryWorker {
  private readonly sender: WebhookSender;
  private readonly ledgers: DeliveryLedgers;
  private readonly scheduler: Scheduler;
  private readonly dispatcher: Dispatcher;
  private readonly recovery: Recovery;
  private readonly departedApps: DepartedApps | null;
  private controller: AbortController | null = null;
  /** Answers are recorded from start until the end of stop's drain. */
  private recording = false;
  private loops: Promise<void>[] = [];
  /** The heartbeat outlives the other loops at stop: it ends once nothing of this copy is in flight. */
  private heartbeat: { controller: AbortController; loop: Promise<void> } | null = null;
  private readonly onStopped: (() => void) | undefined;
  private readonly log: WorkerOptions['log'];
  /** This worker's name in the delivery records it writes. */
  readonly workerId: string;

  constructor(
    private readonly deps: WorkerDeps,
    options: WorkerOptions,
  ) {
    const { workerId, log } = options;
    this.workerId = workerId;
    this.onStopped = options.onStopped;
    this.log = log;
    const now = () => deps.clock.now().getTime();
    this.sender = new WebhookSender({
      allowed: parseAllowedRanges(options.allowedRanges),
      extraCa: options.extraCa,
      timeoutMs: options.timeoutMs,
      connectionsPerOrigin: options.connectionsPerDestination,
    });
    const targets = new Targets(deps.secrets);
    this.ledgers = new DeliveryLedgers(deps.events, { checkpoint: () => this.dispatcher.storedCheckpoint, lingerMs: options.recordBatchMs });
    const attemptDeps = {
      targets,
      ledgers: this.ledgers,
      sender: this.sender,
      clock: deps.clock,
      workerId,
      retry: options.retry,
      random: options.random ?? Math.random,
      running: () => this.recording,
      onAttempt: options.onAttempt,
      log,
    };
    const placeOf = (subscriptionId: string): Place => {
      const target = targets.get(subscriptionId);
      return target ? { team: target.teamId, destination: originOf(target.url) } : { team: '', destination: '' };
    };
    this.scheduler = new Scheduler(
      {
        concurrency: options.concurrency,
        concurrencyPerSubscription: options.concurrencyPerSubscription,
        concurrencyPerTeam: options.concurrencyPerTeam,
        concurrencyPerDestination: options.connectionsPerDestination,
        now,
        placeOf,
      },
      options.fenceWhenSilent
        ? async (job, release) => {
            const clear = await this.recovery.clearToAttempt(job);
            if (clear === 'taken') return { kind: 'done' };
            if (clear === 'wait') return { kind: 'retry', job: { ...job, dueAt: now() + liveness.beatEveryMs } };
            return attemptDelivery(attemptDeps, job, release);
          }
        : (job, release) => attemptDelivery(attemptDeps, job, release),
    );
    const shared = { readModels: deps.readModels, clock: deps.clock, targets, ledgers: this.ledgers, scheduler: this.scheduler, workerId, log };
    this.dispatcher = new Dispatcher({ ...shared, events: deps.events });
    // A copy silent for half the takeover time (no beat in a window of that length) has stopped.
    const liveness = new WorkerLiveness(deps.counters, now, Math.max(200, Math.floor(options.orphanAfterMs / 2)));
    const claims = new TakeoverClaims(deps.counters, liveness, now, Math.max(1_000, options.orphanAfterMs), workerId);
    this.recovery = new Recovery({ ...shared, orphanAfterMs: options.orphanAfterMs, liveness, claims });
    const departed = deps.departedApps;
    this.departedApps = departed
      ? new DepartedApps({ events: deps.events, readModels: deps.readModels, clock: deps.clock, secrets: deps.secrets, newId: () => departed.newId(), projections: departed.projections, log })
      : null;
  }

  /** The dispatcher's checkpoint: the last global position it has claimed deliveries for. */
  get position(): bigint {
    return this.dispatcher.checkpoint;
  }

  async start(): Promise<void> {
    const deps = this.deps;
    if (this.controller) return;
    this.controller = new AbortController();
    this.recording = true;
    this.scheduler.start();
    const { signal } = this.controller;
    // Beating before anything is held: another copy's scan must not take what this one resumes. The
    // counter store is needed only for that: a failing one is logged and delivering goes on.
    await this.recovery.beat();
    const beating = new AbortController();
    this.heartbeat = { controller: beating, loop: this.recovery.keepBeating(beating.signal) };
    await this.dispatcher.loadState();
    // Deletions (and auto-disables) made while this worker was down are read before any pending retry resumes.
    const head = await deps.events.headPosition();
    while (this.dispatcher.checkpoint < head && (await this.dispatcher.dispatchPage())) {}
    await this.recovery.resumeAtStart();
    this.loops.push(this.dispatcher.loop(signal), this.recovery.orphanLoop(signal));
    if (this.departedApps) {
      await this.departedApps.loadState();
      this.loops.push(this.departedApps.loop(signal));
    }
  }

  /** Stops claiming and starting deliveries; attempts in flight get `drainMs` to finish and be recorded. */
  async stop(drainMs = 500): Promise<void> {
    this.controller?.abort();
    this.scheduler.stop();
    await Promise.all(this.loops);
    this.loops = [];
    // Checkpoints moved in memory past events they act on nothing in; not stored: those are read again at the next start.
    await this.dispatcher.storeCheckpoint().catch((error: unknown) => this.log?.error({ err: error }, 'storing the webhook dispatcher checkpoint failed'));
    await this.departedApps?.storeCheckpoint().catch((error: unknown) => this.log?.error({ err: error }, 'storing the departed apps checkpoint failed'));
    // Attempts cut short here are not recorded: they stay pending in the stream and resume at the next start.
    const deadline = Date.now() + drainMs;
    while (this.scheduler.inFlight > 0 && Date.now() < deadline) await sleep(10);
    this.recording = false;
    await this.sender.destroy().catch(() => {});
    while (this.scheduler.inFlight > 0) await sleep(10);
    try {
      await this.ledgers.closeAll();
    } finally {
      this.heartbeat?.controller.abort();
      await this.heartbeat?.loop;
      this.heartbeat = null;
      // Nothing of this worker is in flight any more: its name may go to the next worker.
      this.controller = null;
      this.onStopped?.();
    }
  }

  /** Deliveries waiting for a retry's due time, and all this worker holds (due, queued or in flight). */
  get queue(): { waitingForRetry: number; held: number; inFlight: number } {
    return { waitingForRetry: this.scheduler.waitingForRetry, held: this.scheduler.heldCount, inFlight: this.scheduler.inFlight };
  }

  /** Resolves when the dispatcher has passed `position` (for tests and the benchmark). */
  async waitForPosition(position: bigint, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.dispatcher.checkpoint < position) {
      if (Date.now() > deadline) return false;
      await sleep(5);
    }
    return true;
  }

  /** One page of the global log. Returns false when there was nothing new. */
  dispatchPage(): Promise<boolean> {
    return this.dispatcher.dispatchPage();
  }
}
