import { createHash } from 'node:crypto';
import type { Clock } from '../../ports/clock.ts';
import type { CounterStore } from '../../ports/counterStore.ts';

/**
 * Failed sign-ins per (email, IP) pair, in the shared counter store so the limit holds across every
 * process of the service: `limit` failures within `windowMs` lock the pair out until the oldest of
 * them leaves the window. Failures are counted in buckets of windowMs/15 (one minute by default).
 */
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
    return `signin:${createHash('sha256').update(pair).digest('hex').slice(0, 32)}:${bucket}`;
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

  /** Seconds until the pair may try again, or 0. */
  async retryAfter(pair: string): Promise<number> {
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

  async fail(pair: string): Promise<void> {
    const bucket = Math.floor(this.clock.now().getTime() / this.bucketMs);
    await this.counters.increment(this.keyOf(pair, bucket), 1, this.expiryOf(bucket));
  }

  /** A successful sign-in clears the pair's failures. */
  async succeed(pair: string): Promise<void> {
    for (const [bucket, n] of await this.recent(pair)) if (n > 0) await this.counters.increment(this.keyOf(pair, bucket), -n, this.expiryOf(bucket));
  }
}
