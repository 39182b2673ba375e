/**
 * At most `size` holders at a time; the others wait in turn. `take` resolves with the slot's release
 * (call it once), or with null when `signal` aborts first (a stop: the caller does nothing).
 */
export class Slots {
  private free: number;
  private readonly queue: Array<(release: () => void) => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  /** Holders waiting for a slot now. */
  get waiting(): number {
    return this.queue.length;
  }

  take(signal?: AbortSignal): Promise<(() => void) | null> {
    if (signal?.aborted) return Promise.resolve(null);
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => {
      const grant = (release: () => void) => {
        signal?.removeEventListener('abort', abort);
        resolve(release);
      };
      const abort = () => {
        const i = this.queue.indexOf(grant);
        if (i >= 0) this.queue.splice(i, 1);
        resolve(null);
      };
      signal?.addEventListener('abort', abort, { once: true });
      this.queue.push(grant);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      // Handed on without passing through `free`: a newcomer cannot take it out of turn.
      if (next) next(this.releaser());
      else this.free += 1;
    };
  }
}
