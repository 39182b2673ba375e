import type { CounterStore } from '../../ports/counterStore.ts';

/**
 * Delivery worker copies' signs of life, in the counter store every copy shares (the counters file
 * on the embedded store, MongoDB in scale-out). Time is cut into windows of `windowMs`; a live copy
 * adds one to its key of the current window several times per window. A copy with no beat in the
 * current window nor the previous one has been silent at least a whole window.
 *
 * A pending delivery is only an orphan when the copy that holds it is silent: a delivery due long
 * ago may still be queued in a live copy, waiting for a slot behind a slow destination, and taking
 * it over would send it twice and break the per-subscription bound.
 */
export class WorkerLiveness {
  constructor(
    private readonly counters: Pick<CounterStore, 'increment'>,
    private readonly now: () => number,
    readonly windowMs: number,
  ) {}

  /** How often a live copy beats: four times a window, so a beat is never a window late unless its event loop stalls that long. */
  get beatEveryMs(): number {
    return Math.max(100, Math.floor(this.windowMs / 4));
  }

  async beat(workerId: string): Promise<void> {
    const window = this.windowOf(this.now());
    await this.counters.increment(this.key(workerId, window), 1, this.expiry(window));
  }

  /** True when `workerId` has not beaten in this window nor the last (adding 0 reads a counter). */
  async isSilent(workerId: string): Promise<boolean> {
    const window = this.windowOf(this.now());
    for (const w of [window, window - 1]) {
      if ((await this.counters.increment(this.key(workerId, w), 0, this.expiry(w))) > 0) return false;
    }
    return true;
  }

  private windowOf(ms: number): number {
    return Math.floor(ms / this.windowMs);
  }

  private key(workerId: string, window: number): string {
    return `webhook-worker-alive:${workerId}:${window}`;
  }

  /** Kept two windows past its own: read as "the previous window" during the next one. */
  private expiry(window: number): Date {
    return new Date((window + 3) * this.windowMs);
  }
}
