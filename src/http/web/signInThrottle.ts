import { createHash } from 'node:crypto';
import type { Clock } from '../../ports/clock.ts';
import type { CounterStore } from '../../ports/counterStore.ts';

/**
 * Failed sign-ins per (email, IP) pair, in the shared counter store so the limit holds across every
 * process of the service: `limit` failures within `windowMs` lock the pair out until the oldest of
 * them leaves the window. Failures are counted in buckets of windowMs/15 (one minute by default);
 * an attempt is counted when it starts (`attempt`) and taken back when it succeeds.
 */
/** A counter-store key naming an email and an address without holding either: `prefix:` + 32 hex of their SHA-256. */
export const counterKey = (prefix: string, pair: string) => `${prefix}:${createHash('sha256').update(pair).digest('hex').slice(0, 32)}`;

export class SignInThrottle {
  private readonly bucketMs: number;
  private readonly buckets = 15;

  constructor(
    private readonly counters: CounterStore,
    private readonly clock: Clock,
    readonly limit = 5,
    readonly windowMs = 15 * 60_000,
  ) {
    this.bucketMs = windowMs / this.buckets;
  }

  private keyOf(pair: string, bucket: number): string {
    return `${counterKey('signin', pair)}:${bucket}`;
  }

  private expiryOf(bucket: number): Date {
    return new Date((bucket + this.buckets + 1) * this.bucketMs);
  }

  /** The counted buckets, oldest first, with their failures. */
  private async recent(pair: string): Promise<Array<[bucket: number, failures: number]>> {
    const current = Math.floor(this.clock.now().getTime() / this.bucketMs);
    const buckets = Array.from({ length: this.buckets }, (_, i) => current - this.buckets + 1 + i);
    const counts = await Promise.all(buckets.map((b) => this.counters.increment(this.keyOf(pair, b), 0, this.expiryOf(b))));
    return buckets.map((b, i) => [b, Math.max(0, counts[i]!)]);
  }

  /**
   * Counts an attempt of the pair before its password is checked: 0 when admitted (the attempt then
   * stands as a failure unless `succeed` follows), else the seconds until the pair may try again
   * (the attempt not counted). Counted first, like the write tier, so concurrent guesses each read a
   * distinct count: checking, then verifying, then counting let a burst of parallel guesses all pass.
   */
  async attempt(pair: string, at: number = this.clock.now().getTime()): Promise<number> {
    // `at`: the moment the caller will give it back for (giveBack's attemptedAt), so both name one bucket.
    const bucket = Math.floor(at / this.bucketMs);
    const key = this.keyOf(pair, bucket);
    // Asked together (one commit of the counter store); the earlier buckets are closed.
    let [own, recent] = await Promise.all([this.counters.increment(key, 1, this.expiryOf(bucket)), this.recent(pair)]);
    // A success clears what it reads, give-backs of refused attempts still on their way included,
    // and those then take the minute below zero: restart it at this attempt, or the deficit would
    // admit guesses beyond the limit.
    if (own < 1) own = await this.counters.increment(key, 1 - own, this.expiryOf(bucket));
    const earlier = recent.reduce((sum, [b, n]) => (b === bucket ? sum : sum + n), 0);
    if (earlier + own <= this.limit) return 0;
    await this.counters.increment(key, -1, this.expiryOf(bucket));
    return Math.max(1, await this.retryAfter(pair));
  }

  /** Seconds until the pair may try again, or 0. */
  private async retryAfter(pair: string): Promise<number> {
    const recent = await this.recent(pair);
    let total = recent.reduce((sum, [, n]) => sum + n, 0);
    if (total < this.limit) return 0;
    for (const [bucket, n] of recent) {
      total -= n;
      if (total < this.limit) {
        const freeAt = (bucket + this.buckets) * this.bucketMs;
        return Math.max(1, Math.ceil((freeAt - this.clock.now().getTime()) / 1000));
      }
    }
    return 1;
  }

  /** A successful sign-in takes back its own attempt only (a client's address: its own account's success must not clear the guesses before it). */
  async giveBack(pair: string, attemptedAt: number = this.clock.now().getTime()): Promise<void> {
    // The bucket the attempt was counted in: a password check may end in the next one.
    const bucket = Math.floor(attemptedAt / this.bucketMs);
    await this.counters.increment(this.keyOf(pair, bucket), -1, this.expiryOf(bucket));
  }

  /** A successful sign-in clears the pair's failures. */
  async succeed(pair: string): Promise<void> {
    for (const [bucket, n] of await this.recent(pair)) if (n > 0) await this.counters.increment(this.keyOf(pair, bucket), -n, this.expiryOf(bucket));
  }
}
