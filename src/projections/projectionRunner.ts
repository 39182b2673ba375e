import type { EventStore } from '../ports/eventStore.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';
import { sleep } from '../lib/sleep.ts';
import type { Projection } from './projection.ts';

/** Events per step while following the log, and while catching up (larger pages: fewer commits, more writes folded together). */
const PAGE = 1_000;
export const CATCH_UP_PAGE = 5_000;

export interface RunnerOptions {
  onError?: (error: unknown) => void;
  onProgress?: (position: bigint) => void;
}

/**
 * Feeds the global log to every projection in pages. Each projection keeps its own checkpoint,
 * moved in the same step as its writes, so a restart resumes after the last applied page and a
 * version bump rebuilds only that projection.
 */
export class ProjectionRunner {
  private positions = new Map<string, bigint>();
  private waiters: Array<{ position: bigint; names?: readonly string[]; resolve: () => void }> = [];
  private controller: AbortController | null = null;
  private loop: Promise<void> | null = null;
  /** Cuts the loop's idle wait short when a reader needs a position the loop has not applied yet. */
  private wake = new AbortController();

  constructor(
    private readonly events: EventStore,
    private readonly readModels: ReadModelStore,
    readonly projections: readonly Projection[],
    private readonly options: RunnerOptions = {},
  ) {}

  /** Loads checkpoints and rebuilds every projection whose stored version differs from its code. */
  async init(): Promise<void> {
    for (const projection of this.projections) {
      const checkpoint = await this.readModels.getCheckpoint(projection.name);
      if (!checkpoint || checkpoint.version !== projection.version) {
        await this.readModels.reset(projection.name, projection.collections);
        this.positions.set(projection.name, -1n);
      } else {
        this.positions.set(projection.name, checkpoint.position);
      }
    }
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
          if (!advanced) await this.events.waitForNew(this.position, 1_000, AbortSignal.any([signal, this.wake.signal]));
        } catch (error) {
          this.options.onError?.(error);
          await sleep(backoff, signal);
          backoff = Math.min(backoff * 2, 5_000);
        }
      }
    })();
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
    const from = this.position;
    const page = await this.events.readAll({ after: from, limit });
    if (page.length === 0) {
      await this.refreshCheckpoints();
      return false;
    }
    const to = page[page.length - 1]!.position;
    try {
      for (const projection of this.projections) {
        const own = this.positions.get(projection.name) ?? -1n;
        if (own >= to) continue;
        const ok = await this.readModels.applyBatch(projection.name, projection.version, own, to, async (writerAt) => {
          for (const event of page) {
            if (event.position <= own || !projection.canHandle(event.type)) continue;
            await projection.handle(event, writerAt(event.position));
          }
        });
        if (ok) this.positions.set(projection.name, to);
        else await this.refreshCheckpoint(projection);
      }
    } finally {
      // Readers waiting on the projections that did move (credentials) go on even when a later one failed.
      this.release();
    }
    this.options.onProgress?.(this.position);
    return true;
  }

  /** Runs until every projection has applied the whole log as it is now. */
  async catchUp(): Promise<void> {
    const head = await this.events.headPosition();
    while (this.position < head) await this.step(CATCH_UP_PAGE);
  }

  /**
   * Read your writes: resolves once every read model (or only the `names` projections) includes
   * `position`, or false after `timeoutMs`.
   */
  waitFor(position: bigint, timeoutMs: number, names?: readonly string[]): Promise<boolean> {
    if (this.positionOf(names) >= position) return Promise.resolve(true);
    if (!this.loop) return this.pollFor(position, timeoutMs, names);
    // Another process may have written it: look now instead of at the store's next poll.
    this.wake.abort();
    this.wake = new AbortController();
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
    if (!this.loop) await this.refreshCheckpoints();
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
  }

  private async refreshCheckpoint(projection: Projection): Promise<void> {
    const checkpoint = await this.readModels.getCheckpoint(projection.name);
    this.positions.set(projection.name, checkpoint && checkpoint.version === projection.version ? checkpoint.position : -1n);
  }
}
