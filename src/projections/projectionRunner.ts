import type { EventStore } from '../ports/eventStore.ts';
import type { ProjectionBatch, ReadModelStore } from '../ports/readModelStore.ts';
import { sleep } from '../lib/sleep.ts';
import { type Projection, typesHandledBy } from './projection.ts';
import { RebuildFold } from './rebuildFold.ts';

/** Events per step while following the log, and while catching up (larger pages: fewer commits, more writes folded together). */
const PAGE = 1_000;
export const CATCH_UP_PAGE = 5_000;
/** Why a wake aborts: `abort()` without a reason builds a DOMException, stack and all, on each write request's wait. */
const WAKE = Object.freeze({ reason: 'a reader is waiting' });
/** Documents per transaction or bulk write when a rebuild writes its result. */
const REBUILD_WRITE_BATCH = 5_000;
/**
 * How often a following runner that found the log empty reads the stored checkpoints again (another
 * process's rebuild may have moved them): once per empty page cost one query per projection on every
 * wake, and each delivery's records wake it.
 */
export const REFRESH_IDLE_EVERY_MS = 1_000;

export interface RunnerOptions {
  onError?: (error: unknown) => void;
  onProgress?: (position: bigint) => void;
  /** REFRESH_IDLE_EVERY_MS unless given (tests). */
  refreshIdleEveryMs?: number;
}

export interface RebuildReport {
  projections: string[];
  /** The position the rebuilt projections stand at (the head when the rebuild started). */
  position: bigint;
  /** The events folded: those of the types the rebuilt projections handle. */
  events: number;
  documents: number;
}

/**
 * Feeds the global log to every projection in pages. Each projection keeps its own checkpoint,
 * moved in the same step as its writes, so a restart resumes after the last applied page and a
 * version bump rebuilds only that projection.
 *
 * A projection without a checkpoint, or with one of another version, is rebuilt in bulk before it
 * follows the log: the history up to the head is folded in memory (RebuildFold), the final documents
 * are written to shadow collections in batches and switched in with the checkpoint at once
 * (ReadModelStore.beginRebuild). Until the switch readers see the documents as they were.
 */
export class ProjectionRunner {
  private positions = new Map<string, bigint>();
  /** Projections to rebuild in bulk before they follow the log. */
  private readonly stale = new Set<string>();
  /** For each event type, the projections that handle it, in registration order. */
  private readonly routes = new Map<string, Projection[]>();
  private waiters: Array<{ position: bigint; names?: readonly string[]; resolve: () => void }> = [];
  private controller: AbortController | null = null;
  private loop: Promise<void> | null = null;
  /** Another thread of this process applies the projections and reports their checkpoints (`advance`). */
  private followed = false;
  /** Asks the thread that applies the projections to read the log now (a reader waits for another process's write). */
  private wakeFollowed: (() => void) | null = null;
  /** Cuts the loop's idle wait short when a reader needs a position the loop has not applied yet. */
  private wake = new AbortController();
  /** When the stored checkpoints were last read (`refreshCheckpoints`), on the monotonic clock (a wall clock stepped back held the reads off by as much). */
  private refreshedAt = Number.NEGATIVE_INFINITY;
  private readonly refreshEveryMs: number;

  constructor(
    private readonly events: EventStore,
    private readonly readModels: ReadModelStore,
    readonly projections: readonly Projection[],
    private readonly options: RunnerOptions = {},
  ) {
    // Bounded below: a zero or NaN interval would turn the idle wait into a busy loop.
    const every = options.refreshIdleEveryMs;
    this.refreshEveryMs = every !== undefined && Number.isFinite(every) && every >= 50 ? every : REFRESH_IDLE_EVERY_MS;
  }

  /** Loads checkpoints; a projection whose stored version differs from its code (or that has none) is rebuilt at the next step. */
  async init(): Promise<void> {
    for (const projection of this.projections) {
      const checkpoint = await this.readModels.getCheckpoint(projection.name);
      if (!checkpoint || checkpoint.version !== projection.version) {
        this.stale.add(projection.name);
        this.positions.set(projection.name, -1n);
      } else {
        this.positions.set(projection.name, checkpoint.position);
      }
    }
  }

  /** Rebuilds the named projections (all when none are named) in bulk now; they then follow the log from where the rebuild stopped. */
  async rebuild(names?: readonly string[], onProgress?: (position: bigint, head: bigint) => void): Promise<RebuildReport> {
    for (const p of this.projections) if (!names || names.includes(p.name)) this.stale.add(p.name);
    return this.rebuildStale(onProgress);
  }

  private handlersOf(type: string): Projection[] {
    let list = this.routes.get(type);
    if (!list) this.routes.set(type, (list = this.projections.filter((p) => p.canHandle(type))));
    return list;
  }

  /** Folds the history up to the head in memory for every stale projection, then writes and switches each in. */
  private async rebuildStale(onProgress?: (position: bigint, head: bigint) => void): Promise<RebuildReport> {
    const chosen = this.projections.filter((p) => this.stale.has(p.name));
    const head = await this.events.headPosition();
    const folds = new Map(chosen.map((p) => [p.name, new RebuildFold(p, this.readModels)]));
    const types = typesHandledBy(chosen);
    let events = 0;
    let failure: { error: unknown } | null = null;
    for (let after = -1n; after < head; ) {
      const page = await this.events.readAll({ after, limit: CATCH_UP_PAGE, ...(types ? { types } : {}) });
      if (page.length === 0) break;
      for (const event of page) {
        if (event.position > head) break;
        for (const projection of this.handlersOf(event.type)) {
          const fold = folds.get(projection.name);
          if (!fold) continue;
          try {
            await projection.handle(event, fold.at(event.position));
          } catch (error) {
            // This projection stays stale (retried at the next step); the others are rebuilt.
            folds.delete(projection.name);
            failure ??= { error };
          }
        }
        events++;
      }
      after = page[page.length - 1]!.position;
      onProgress?.(after < head ? after : head, head);
    }
    if (types) onProgress?.(head, head); // the events after the last one read were of other types
    let documents = 0;
    const rebuilt: string[] = [];
    for (const fold of folds.values()) {
      const target = await this.readModels.beginRebuild(fold.projection.name, fold.projection.collections);
      try {
        for (const [collection, docs] of fold.batches(REBUILD_WRITE_BATCH)) await target.write(collection, docs);
        await target.commit(fold.projection.version, head);
      } catch (error) {
        await target.abort().catch(() => {});
        throw error;
      }
      documents += fold.size;
      rebuilt.push(fold.projection.name);
      this.positions.set(fold.projection.name, head);
      this.stale.delete(fold.projection.name);
    }
    this.release();
    if (failure) throw failure.error;
    return { projections: rebuilt, position: head, events, documents };
  }

  /** Lowest checkpoint among the projections: everything at or before it is visible in every read model. */
  get position(): bigint {
    return this.positionOf();
  }

  /** Lowest checkpoint among the named projections (every one when `names` is omitted). */
  positionOf(names?: readonly string[]): bigint {
    let min: bigint | null = null;
    for (const [name, p] of this.positions) if ((!names || names.includes(name)) && (min === null || p < min)) min = p;
    return min ?? -1n;
  }

  start(): void {
    if (this.loop) return;
    this.controller = new AbortController();
    const { signal } = this.controller;
    this.loop = (async () => {
      let backoff = 50;
      while (!signal.aborted) {
        try {
          const advanced = await this.step();
          backoff = 50;
          if (!advanced) await this.events.waitForNew(this.position, this.idleWaitMs(), AbortSignal.any([signal, this.wake.signal]));
        } catch (error) {
          this.options.onError?.(error);
          await sleep(backoff, signal);
          backoff = Math.min(backoff * 2, 5_000);
        }
      }
    })();
  }

  /** An idle wait ends by the next read of the stored checkpoints: another process's rebuild is followed within the interval. */
  private idleWaitMs(): number {
    return Math.max(1, Math.min(1_000, this.refreshEveryMs - (performance.now() - this.refreshedAt)));
  }

  async stop(): Promise<void> {
    this.controller?.abort();
    await this.loop;
    this.loop = null;
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
  }

  /** Applies one page of events. Returns false when every projection is caught up. */
  async step(limit = PAGE): Promise<boolean> {
    let rebuildFailure: { error: unknown } | null = null;
    if (this.stale.size > 0) {
      try {
        await this.rebuildStale();
        this.options.onProgress?.(this.position);
        return true;
      } catch (error) {
        // A projection that cannot be rebuilt does not hold the others back: they follow the log below.
        rebuildFailure = { error };
      }
    }
    const following = this.projections.filter((p) => !this.stale.has(p.name));
    if (following.length === 0) throw rebuildFailure!.error;
    let from: bigint | null = null;
    for (const p of following) {
      const own = this.positions.get(p.name) ?? -1n;
      if (from === null || own < from) from = own;
    }
    const page = await this.events.readAll({ after: from!, limit });
    if (rebuildFailure && page.length === 0) throw rebuildFailure.error;
    if (page.length === 0) {
      if (performance.now() - this.refreshedAt >= this.refreshEveryMs) await this.refreshCheckpoints();
      return false;
    }
    const to = page[page.length - 1]!.position;
    const batches: ProjectionBatch[] = [];
    for (const projection of following) {
      const own = this.positions.get(projection.name) ?? -1n;
      if (own >= to) continue;
      batches.push({
        projection: projection.name,
        version: projection.version,
        from: own,
        to,
        apply: async (writerAt) => {
          for (const event of page) {
            if (event.position <= own || !this.handlersOf(event.type).includes(projection)) continue;
            await projection.handle(event, writerAt(event.position));
          }
        },
      });
    }
    // Every projection's batch of the page in one commit where the store can, else one each.
    let applied: boolean[] = [];
    try {
      if (this.readModels.applyBatches) applied = await this.readModels.applyBatches(batches);
      else for (const b of batches) applied.push(await this.readModels.applyBatch(b.projection, b.version, b.from, b.to, b.apply));
    } catch (error) {
      // One projection failed on this page; the others' batches are committed: take their checkpoints.
      await this.refreshCheckpoints();
      this.release();
      throw error;
    }
    for (const [i, batch] of batches.entries()) {
      if (applied[i]) this.positions.set(batch.projection, to);
      else await this.refreshCheckpoint(this.projections.find((p) => p.name === batch.projection)!);
    }
    this.options.onProgress?.(this.position);
    this.release();
    if (rebuildFailure) throw rebuildFailure.error;
    return true;
  }

  /** Runs until every projection has applied the whole log as it is now. */
  async catchUp(): Promise<void> {
    const head = await this.events.headPosition();
    while (this.position < head) await this.step(CATCH_UP_PAGE);
  }

  /**
   * From now on the projections are applied elsewhere in this process (their own thread), which
   * reports each projection's checkpoint through `advance`: `waitFor` waits for those reports
   * instead of polling the stored checkpoints.
   */
  follow(wake?: () => void): void {
    this.followed = true;
    this.wakeFollowed = wake ?? null;
  }

  /** A followed projection's checkpoint moved to `position` (its read models already include it here). */
  advance(projection: string, position: bigint): void {
    this.positions.set(projection, position);
    this.release();
  }

  /**
   * Read your writes: resolves once every read model (or only the `names` projections) includes
   * `position`, or false after `timeoutMs`.
   */
  waitFor(position: bigint, timeoutMs: number, names?: readonly string[]): Promise<boolean> {
    if (this.positionOf(names) >= position) return Promise.resolve(true);
    if (!this.loop && !this.followed) return this.pollFor(position, timeoutMs, names);
    // Another process may have written it: look now instead of at the store's next poll.
    if (this.followed) this.wakeFollowed?.();
    else {
      this.wake.abort(WAKE);
      this.wake = new AbortController();
    }
    return new Promise((resolve) => {
      const waiter = {
        position,
        names,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.positionOf(names) >= position);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** When another process runs the projections (RUN_PROJECTIONS=false here), follow their checkpoints. */
  private async pollFor(position: bigint, timeoutMs: number, names?: readonly string[]): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.refreshCheckpoints();
      if (this.positionOf(names) >= position) return true;
      if (Date.now() >= deadline) return false;
      await sleep(20);
    }
  }

  /** Checkpoints as stored, for processes that do not run the projections themselves. */
  async refresh(): Promise<void> {
    if (!this.loop && !this.followed) await this.refreshCheckpoints();
  }

  private release(): void {
    const ready = this.waiters.filter((w) => w.position <= this.positionOf(w.names));
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }

  /** Another process (the CLI's rebuild) may have moved checkpoints: follow them. */
  private async refreshCheckpoints(): Promise<void> {
    for (const projection of this.projections) await this.refreshCheckpoint(projection);
    this.refreshedAt = performance.now();
  }

  private async refreshCheckpoint(projection: Projection): Promise<void> {
    const checkpoint = await this.readModels.getCheckpoint(projection.name);
    this.positions.set(projection.name, checkpoint && checkpoint.version === projection.version ? checkpoint.position : -1n);
  }
}
