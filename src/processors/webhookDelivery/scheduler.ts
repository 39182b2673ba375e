import { LONGEST_RETRY_DELAY_MS, type PendingDelivery } from '../../domain/webhookDelivery.ts';

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

/** Where a subscription's deliveries count against the shared budgets. */
export interface Place {
  /** The team that owns the subscription. */
  team: string;
  /** The destination origin (`https://host:port`), whose connections all its subscriptions share. */
  destination: string;
}

export interface SchedulerOptions {
  /** Attempts in flight in this process. */
  concurrency: number;
  concurrencyPerSubscription: number;
  concurrencyPerTeam: number;
  /** Equal to the sender's connections per origin, so no attempt ever waits for a pooled connection. */
  concurrencyPerDestination: number;
  now(): number;
  placeOf(subscriptionId: string): Place;
}

interface Lane {
  queue: Job[];
  inFlight: number;
  place: Place;
}

interface Team {
  /** Its lanes with queued jobs, in round-robin order (served ones move to the end). */
  lanes: Map<string, Lane>;
  inFlight: number;
}

/**
 * When deliveries run. A held job waits on a timer until it is due, then joins its subscription's
 * lane. The next job to start is picked round-robin over teams, then over the team's lanes, among
 * the lanes within all four bounds: attempts in flight per subscription, per team, per destination
 * and overall. So a slow or failing endpoint holds at most its own share, a team with many
 * subscriptions holds at most the team's, and no team waits behind another's queue.
 */
export class Scheduler {
  private readonly lanes = new Map<string, Lane>();
  /** Teams with queued jobs or attempts in flight, in round-robin order. */
  private readonly teams = new Map<string, Team>();
  private readonly destinations = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly held = new Set<string>();
  private running = 0;
  private stopped = false;

  constructor(
    private readonly options: SchedulerOptions,
    private readonly attempt: RunAttempt,
  ) {}

  /** Attempts in flight. */
  get inFlight(): number {
    return this.running;
  }

  /** Deliveries this worker holds: waiting to be due (retries), queued, or in flight. */
  get heldCount(): number {
    return this.held.size;
  }

  /** Deliveries waiting for a later due time: the retry queue. */
  get waitingForRetry(): number {
    return this.timers.size;
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
    if (job.dueAt - this.options.now() <= 0) this.enqueue(job);
    else this.wait(k, job);
  }

  /** Until the job is due; a due time beyond a timer's reach (one stored before retry delays were capped) is waited for in steps. */
  private wait(k: string, job: Job): void {
    const delay = job.dueAt - this.options.now();
    this.timers.set(
      k,
      setTimeout(() => {
        if (job.dueAt - this.options.now() > 0) return this.wait(k, job);
        this.timers.delete(k);
        this.enqueue(job);
      }, Math.min(delay, LONGEST_RETRY_DELAY_MS)),
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
    if (!lane) this.lanes.set(job.subscriptionId, (lane = { queue: [], inFlight: 0, place: this.options.placeOf(job.subscriptionId) }));
    lane.queue.push(job);
    let team = this.teams.get(lane.place.team);
    if (!team) this.teams.set(lane.place.team, (team = { lanes: new Map(), inFlight: 0 }));
    team.lanes.set(job.subscriptionId, lane);
    this.pump();
  }

  /** Starts queued deliveries while a slot is free and some lane is within its bounds. */
  private pump(): void {
    while (this.running < this.options.concurrency) {
      const picked = this.pick();
      if (!picked) return;
      this.run(picked.lane, picked.team);
    }
  }

  /** The next lane to serve: round-robin over teams, then over the team's lanes. */
  private pick(): { lane: Lane; team: Team } | null {
    const { concurrencyPerTeam, concurrencyPerSubscription, concurrencyPerDestination } = this.options;
    for (const [teamId, team] of this.teams) {
      if (team.inFlight >= concurrencyPerTeam) continue;
      for (const [id, lane] of team.lanes) {
        if (lane.queue.length === 0) {
          team.lanes.delete(id);
          if (lane.inFlight === 0) this.lanes.delete(id);
          continue;
        }
        if (lane.inFlight >= concurrencyPerSubscription) continue;
        if ((this.destinations.get(lane.place.destination) ?? 0) >= concurrencyPerDestination) continue;
        // Served: to the back of both rounds.
        team.lanes.delete(id);
        team.lanes.set(id, lane);
        this.teams.delete(teamId);
        this.teams.set(teamId, team);
        return { lane, team };
      }
      if (team.lanes.size === 0 && team.inFlight === 0) this.teams.delete(teamId);
    }
    return null;
  }

  private run(lane: Lane, team: Team): void {
    const job = lane.queue.shift()!;
    const { destination } = lane.place;
    lane.inFlight++;
    team.inFlight++;
    this.destinations.set(destination, (this.destinations.get(destination) ?? 0) + 1);
    this.running++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      lane.inFlight--;
      team.inFlight--;
      const left = this.destinations.get(destination)! - 1;
      if (left === 0) this.destinations.delete(destination);
      else this.destinations.set(destination, left);
      this.running--;
      if (lane.queue.length === 0 && lane.inFlight === 0 && this.lanes.get(job.subscriptionId) === lane) this.lanes.delete(job.subscriptionId);
      if (team.lanes.size === 0 && team.inFlight === 0 && this.teams.get(lane.place.team) === team) this.teams.delete(lane.place.team);
      this.pump();
    };
    void this.settle(job, release);
  }

  private async settle(job: Job, release: () => void): Promise<void> {
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
