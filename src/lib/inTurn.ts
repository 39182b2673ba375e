/**
 * Runs tasks that share a key one after another, in the order they were given; tasks of other keys
 * run meanwhile. Returns what `task` returns (or throws). A key is forgotten once its queue is empty.
 */
export class InTurn {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(task);
    const tail = result.then(
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
