/**
 * Runs tasks that share a key one after another, in the order they were given; tasks of other keys
 * run meanwhile. Returns what `task` returns (or throws). A key is forgotten once its queue is empty.
 * A task whose turn has not come within `maxWaitMs` (when given) is refused with `onTimeout()`'s
 * error and never runs (its caller has been answered); the tasks after it still wait for those before it.
 */
export class InTurn {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>, wait?: { maxWaitMs?: number; onTimeout: () => Error }): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let gaveUp = false;
    const result = new Promise<T>((resolve, reject) => {
      const timer = wait?.maxWaitMs === undefined ? undefined : setTimeout(() => ((gaveUp = true), reject(wait.onTimeout())), wait.maxWaitMs);
      void previous.then(() => {
        if (gaveUp) return;
        clearTimeout(timer);
        Promise.resolve().then(task).then(resolve, reject);
      });
    });
    const tail = previous.then(() => (gaveUp ? undefined : result)).then(
      () => {},
      () => {},
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with a task queued or running (tests). */
  get size(): number {
    return this.tails.size;
  }
}
