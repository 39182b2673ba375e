import type { ReadModelStore } from '../ports/readModelStore.ts';
import { CHECKPOINT_IDLE_STORE_MS, CHECKPOINT_STORE_EVERY_MS } from './followLog.ts';

/** What a store did: wrote the position, had nothing to write (or was not due), or found that another copy had moved the checkpoint first. */
export type StoreOutcome = 'stored' | 'kept' | 'lost';

/**
 * A log follower's checkpoint in the read-model store (the webhook dispatcher, the departed apps,
 * the agent runner, the Outreach Agent). A page the follower acted on is stored before the next is
 * read, with whatever the follower writes (`committed`). A page it acted on nothing in moves the
 * checkpoint in memory only (`passed`): stored CHECKPOINT_STORE_EVERY_MS after the last store, once
 * the log has been idle for CHECKPOINT_IDLE_STORE_MS (`idle`), or at stop (`store`), not with a
 * read-model commit on every append. After a crash those pages are read again, and nothing in them
 * is acted on.
 */
export class LazyCheckpoint {
  private read = -1n;
  private written = -1n;
  // On the monotonic clock (a wall clock stepped back held every store off by as much); none yet: long ago.
  private storedAt = Number.NEGATIVE_INFINITY;
  private movedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly readModels: Pick<ReadModelStore, 'applyBatch' | 'getCheckpoint'>,
    private readonly projection: string,
    private readonly version: number,
  ) {}

  /** How far the log has been read. */
  get position(): bigint {
    return this.read;
  }

  /** As stored: every compare-and-set of the follower's goes from here. */
  get stored(): bigint {
    return this.written;
  }

  /** Where it stands as stored (at start, or after another copy moved it first). */
  at(position: bigint): void {
    this.read = this.written = position;
  }

  /** Another copy moved the stored checkpoint first (`lost`): stands where that copy stored it. */
  async reload(): Promise<void> {
    this.at((await this.readModels.getCheckpoint(this.projection))?.position ?? -1n);
  }

  /** Read up to `to`, in memory only (a page acted on is then stored with `store`, or its writes with `committed`). */
  movedTo(to: bigint): void {
    this.read = to;
    this.movedAt = performance.now();
  }

  /** A page acted on nothing in, read up to `to`: stored if a store is due. */
  passed(to: bigint): Promise<StoreOutcome> {
    this.movedTo(to);
    return this.due ? this.store() : Promise.resolve('kept');
  }

  /** Nothing new in the log: stored once it has been idle long enough. */
  idle(): Promise<StoreOutcome> {
    return performance.now() - this.movedAt >= CHECKPOINT_IDLE_STORE_MS ? this.store() : Promise.resolve('kept');
  }

  /** Whether the last store is old enough that a page acted on nothing in should be stored too. */
  get due(): boolean {
    return performance.now() - this.storedAt >= CHECKPOINT_STORE_EVERY_MS;
  }

  /** The follower committed its own writes with the checkpoint at `to` (its compare-and-set from `stored`). */
  committed(to: bigint): void {
    this.read = this.written = to;
    this.storedAt = this.movedAt = performance.now();
  }

  /**
   * Stores the position now. `lost`: another copy moved the stored checkpoint first (the follower
   * takes that copy's view: `reload`, or its own state with `at`); not tried again until the next store is due.
   */
  async store(): Promise<StoreOutcome> {
    if (this.read <= this.written) return 'kept';
    const to = this.read;
    const moved = await this.readModels.applyBatch(this.projection, this.version, this.written, to, async () => {});
    this.storedAt = performance.now();
    if (!moved) return 'lost';
    this.written = to;
    return 'stored';
  }
}
