/**
 * Items queued by group, taken with the groups in turn: the first group's oldest item, then the next
 * group's, and so on round the groups that have any (a group that empties leaves the round; one that
 * gets items again joins at its end). One group with many items does not make the others wait behind
 * all of them, however late theirs arrive.
 */
export class Turns<T> {
  /** Groups with items, in turn order: the first takes the next turn. */
  private readonly groups = new Map<string, T[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(group: string, item: T): void {
    const items = this.groups.get(group);
    if (items) items.push(item);
    else this.groups.set(group, [item]);
    this.count++;
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
    return item;
  }

  clear(): void {
    this.groups.clear();
    this.count = 0;
  }
}
