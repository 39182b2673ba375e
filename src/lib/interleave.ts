/**
 * The items one per group in turn (the first of each group, then the second of each…), groups in
 * the order they first appear, each group's items in their own order: one group with many items
 * does not make the others wait behind all of them.
 */
export function interleaveBy<T>(items: readonly T[], groupOf: (item: T) => string): T[] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = groupOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  const lists = [...groups.values()];
  const out: T[] = [];
  for (let i = 0; out.length < items.length; i++) for (const list of lists) if (i < list.length) out.push(list[i]!);
  return out;
}
