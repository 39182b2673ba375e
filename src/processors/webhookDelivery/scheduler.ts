import type { PendingDelivery } from '../../domain/webhookDelivery.ts';

/** A delivery this process holds: queued, waiting for its due time, or in flight. */
export type Job = PendingDelivery;

/** What the scheduler does once an attempt is over. */
export type AfterAttempt =
  | { kind: 'done' }
  /** Hold the job again, due at `job.dueAt` (a retry, or a record that could not be written yet). */
  | { kind: 'retry'; job: Job }
  /** The attempt's record disabled the subscription: drop everything else queued for it. */
  | { kind: 'subscriptionDisabled' };

/** Runs one attempt. `release` gives the concurrency slot back before the outcome is recorded. */
export type RunAttempt = (job: Job, release: () => void) => Promise<AfterAttempt>;

export const jobKey = (job: { subscriptionId: string; deliveryId: string }) => `${job.subscriptionId}:${job.deliveryId}`;

interface Lane {
  queue: Job[];
  inFlight: number;
}

/**
 * When deliveries run. A held job waits on a timer until it is due, then joins its subscription's
 * lane; lanes are served round-robin within two bounds: attempts in flight per subscription and
 * overall. So a slow or failing endpoint holds at most its own bound while others keep flowing.
 */
export class Scheduler {
  private readonly lanes = new Map<string, Lane>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly held = new Set<string>();
  private running = 0;
  private stopped = false;

  constructor(
    private readonly options: { concurrency: number; concurrencyPerSubscription: number; now(): number },
    private readonly attempt: RunAttempt,
  ) {}

  /** Attempts in flight. */
  get inFlight(): number {
    return this.running;
  }

  isHeld(key: string): boolean {
    return this.held.has(key);
  }

  start(): void {
    this.stopped = false;
  }

  /** Holds nothing more, and drops what waits; attempts in flight run on. */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const lane of this.lanes.values()) lane.queue = [];
  }

  /** Takes a job unless it is already held; it runs when due. */
  hold(job: Job): void {
    const k = jobKey(job);
    if (this.held.has(k) || this.stopped) return;
    this.held.add(k);
    const delay = job.dueAt - this.options.now();
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

  /** Drops one subscription's waiting and queued jobs (deleted or disabled); attempts in flight run on. */
  cancel(subscriptionId: string): void {
    const prefix = `${subscriptionId}:`;
    for (const [k, timer] of this.timers) {
      if (k.startsWith(prefix)) {
        clearTimeout(timer);
        this.timers.delete(k);
        this.held.delete(k);
      }
    }
    const lane = this.lanes.get(subscriptionId);
    if (lane) {
      for (const job of lane.queue) this.held.delete(jobKey(job));
      lane.queue = [];
    }
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
    while (progressed && this.running < this.options.concurrency) {
      progressed = false;
      for (const [id, lane] of this.lanes) {
        if (this.running >= this.options.concurrency) break;
        if (lane.queue.length === 0) {
          if (lane.inFlight === 0) this.lanes.delete(id);
          continue;
        }
        if (lane.inFlight >= this.options.concurrencyPerSubscription) continue;
        const job = lane.queue.shift()!;
        lane.inFlight++;
        this.running++;
        progressed = true;
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          lane.inFlight--;
          this.running--;
          this.pump();
        };
        void this.run(job, release);
      }
    }
  }

  private async run(job: Job, release: () => void): Promise<void> {
    let after: AfterAttempt = { kind: 'done' };
    try {
      after = await this.attempt(job, release);
    } finally {
      this.held.delete(jobKey(job));
      if (after.kind === 'retry') this.hold(after.job);
      else if (after.kind === 'subscriptionDisabled') this.cancel(job.subscriptionId);
      release();
    }
  }
}
