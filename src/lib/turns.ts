/**
 * Items queued by group, taken with the groups in turn: the first group's oldest item, then the next
 * group's, and so on round the groups that have any (a group that empties leaves the round; one that
 * gets items again joins it before the group that has just had its turn). One group with many items
 * does not make the others wait behind all of them, however late theirs arrive.
 */
export class Turns<T> {
  /** Groups with items, in turn order: the first takes the next turn. */
  private readonly groups = new Map<string, T[]>();
  /** The group that had the last turn, while it is still the last in the order. */
  private justServed: string | null = null;
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(group: string, item: T): void {
    this.count++;
    const items = this.groups.get(group);
    if (items) {
      items.push(item);
      return;
    }
    this.groups.set(group, [item]);
    // A group joining comes before the one that has just had its turn.
    if (this.justServed !== null) {
      const served = this.groups.get(this.justServed)!;
      this.groups.delete(this.justServed);
      this.groups.set(this.justServed, served);
    }
  }

  /** The next item, or undefined when there is none. */
  take(): T | undefined {
    const next = this.groups.entries().next();
    if (next.done) return undefined;
    const [group, items] = next.value;
    const item = items.shift()!;
    this.count--;
    // Its turn taken: to the end of the round, if it has more.
    this.groups.delete(group);
    if (items.length > 0) this.groups.set(group, items);
    this.justServed = items.length > 0 ? group : null;
    return item;
  }

  clear(): void {
    this.groups.clear();
    this.justServed = null;
    this.count = 0;
  }
}
