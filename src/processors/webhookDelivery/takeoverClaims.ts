import type { PendingDelivery } from '../../domain/webhookDelivery.ts';
import type { CounterStore } from '../../ports/counterStore.ts';
import { jobKey } from './scheduler.ts';
import type { WorkerLiveness } from './workerLiveness.ts';

/** Claims outlive any takeover in progress: the taker's first attempt, recorded, ends the claim's use. */
const KEEP_MS = 24 * 60 * 60 * 1000;

/**
 * Which copy takes over a silent copy's pending delivery. Taking one over writes nothing to its
 * stream until the taker's first attempt (which names the taker), so every other live copy would
 * still see it held by the silent one and take it too. A taker claims it first, in the shared counter
 * store: one claim per generation (`generationMs`) is won, the winner marks itself, and a delivery
 * marked by a live copy other than this one is left to it. A winner that stops before its attempt is
 * silent in turn: the delivery is claimed again in a later generation; one that starts again under
 * its name first holds what it marked (`markedByThis`), as the silent copy's name leaves it to it.
 *
 * The holder coming back while a taker claims: the holder beats before it reads the marks, the taker
 * marks before it reads the holder's liveness again, so at least one of them sees the other.
 */
export class TakeoverClaims {
  constructor(
    private readonly counters: Pick<CounterStore, 'increment' | 'range'>,
    private readonly liveness: WorkerLiveness,
    private readonly now: () => number,
    private readonly generationMs: number,
    private readonly workerId: string,
  ) {}

  /** Whether a live copy other than this one has claimed the delivery as it stands (its holder and attempts). */
  async claimedByAnother(p: PendingDelivery): Promise<boolean> {
    const marks = `${this.base(p)}:m:`;
    // ';' follows ':': every key that starts with `marks`.
    for (const { key, count } of await this.counters.range(marks, `${marks.slice(0, -1)};`)) {
      const id = key.slice(marks.length);
      if (count > 0 && id !== this.workerId && !(await this.liveness.isSilent(id))) return true;
    }
    return false;
  }

  /** Whether this copy marked the delivery as it stands: it won the takeover, and may have stopped before its attempt. */
  async markedByThis(p: PendingDelivery): Promise<boolean> {
    const mark = this.markOf(p);
    return (await this.counters.range(mark, mark)).some(({ count }) => count > 0);
  }

  /** True for the one copy that is to take the delivery over from its silent holder. */
  async claim(p: PendingDelivery): Promise<boolean> {
    if (await this.claimedByAnother(p)) return false;
    const base = this.base(p);
    const now = this.now();
    const expires = new Date(now + KEEP_MS);
    if ((await this.counters.increment(`${base}:c:${Math.floor(now / this.generationMs)}`, 1, expires)) !== 1) return false;
    const mark = this.markOf(p);
    await this.counters.increment(mark, 1, expires);
    // Another copy may have won the previous generation's claim while this one looked: it keeps it.
    // The holder may have started again since it was found silent: it keeps what it holds.
    if ((await this.claimedByAnother(p)) || !(await this.liveness.isSilent(p.workerId))) {
      await this.counters.increment(mark, -1, expires);
      return false;
    }
    return true;
  }

  /** This copy's mark on the delivery as it stands. */
  private markOf(p: PendingDelivery): string {
    return `${this.base(p)}:m:${this.workerId}`;
  }

  private base(p: PendingDelivery): string {
    return `webhook-takeover:${jobKey(p)}:${p.attempts}:${p.workerId}`;
  }
}
