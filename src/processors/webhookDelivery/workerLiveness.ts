import { type CounterStore, windowKey } from '../../ports/counterStore.ts';

/**
 * Delivery worker copies' signs of life, in the counter store every copy shares (the counters file
 * on the embedded store, MongoDB in scale-out). A live copy adds one to its key of the current second
 * four times per window (`windowMs`, half its WEBHOOK_ORPHAN_AFTER_MS). A copy is silent to a reader
 * when it has no beat in the reader's last two windows: copies whose settings differ still see each
 * other beat while the beater's window is under eight of the reader's.
 *
 * A pending delivery is only an orphan when the copy that holds it is silent: a delivery due long
 * ago may still be queued in a live copy, waiting for a slot behind a slow destination, and taking
 * it over would send it twice and break the per-subscription bound.
 */
export class WorkerLiveness {
  constructor(
    private readonly counters: Pick<CounterStore, 'increment' | 'range'>,
    private readonly now: () => number,
    readonly windowMs: number,
  ) {}

  /** How often a live copy beats: four times a window, so a beat is never a window late unless its event loop stalls that long. */
  get beatEveryMs(): number {
    return Math.max(100, Math.floor(this.windowMs / 4));
  }

  async beat(workerId: string): Promise<void> {
    const now = this.now();
    // Kept past any reader's look back at a live copy, whose next beat comes within a quarter window.
    await this.counters.increment(this.key(workerId, Math.floor(now / 1000)), 1, new Date(now + 2 * this.windowMs + 60_000));
  }

  /** True when `workerId` has not beaten in the last two windows (beats up to a minute ahead, by a clock ahead of this one, count). */
  async isSilent(workerId: string): Promise<boolean> {
    const now = this.now();
    const beats = await this.counters.range(this.key(workerId, Math.floor((now - 2 * this.windowMs) / 1000)), this.key(workerId, Math.floor(now / 1000) + 60));
    return !beats.some(({ count }) => count > 0);
  }

  private key(workerId: string, second: number): string {
    return windowKey(`webhook-worker-alive:${workerId}`, second);
  }
}
