/** What `PasswordCheckGate.run` answers when it has no room: the caller refuses the request instead. */
export const BUSY = Symbol('busy');

/**
 * At most `concurrent` password checks at once and `waiting` more queued; beyond, `BUSY`. A check
 * is a scrypt on libuv's thread pool (4 threads), which every DNS lookup of the process shares
 * (webhook deliveries, page fetches, outbound SMTP): a sign-in flood from many addresses, which no
 * per-address limit stops, must not take the pool from the other tenants' work.
 */
export class PasswordCheckGate {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(
    readonly concurrent: number,
    readonly waiting: number,
  ) {}

  async run<T>(check: () => Promise<T>): Promise<T | typeof BUSY> {
    if (this.active < this.concurrent) this.active += 1;
    else if (this.queue.length < this.waiting) await new Promise<void>((resolve) => this.queue.push(resolve));
    else return BUSY;
    try {
      return await check();
    } finally {
      // The slot passes to the next in line, or is freed.
      const next = this.queue.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}
