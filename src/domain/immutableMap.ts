/**
 * A persistent (immutable) map from string keys, for decider state that must not be mutated yet
 * can hold thousands of entries: `set` and `delete` return a new map sharing all but one path of
 * a 32-way hash trie with the old one (O(log32 n) per change instead of copying a `Map`).
 * Iteration follows insertion order, as a `Map`'s does (replacing a value keeps its place).
 */
const BITS = 5;
const MASK = (1 << BITS) - 1;

interface Entry<V> {
  readonly key: string;
  readonly value: V;
  /** Insertion rank, for iteration in insertion order. */
  readonly rank: number;
}
/** Entries whose keys share one full 32-bit hash. */
interface Bucket<V> {
  readonly hash: number;
  readonly entries: readonly Entry<V>[];
}
type Branch<V> = ReadonlyArray<Slot<V>>;
type Slot<V> = Branch<V> | Bucket<V> | undefined;

const EMPTY_BRANCH: Branch<never> = Object.freeze(new Array<undefined>(1 << BITS).fill(undefined));

/** FNV-1a, 32 bits. */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const isBranch = <V>(slot: Slot<V>): slot is Branch<V> => Array.isArray(slot);

function withSlot<V>(branch: Branch<V>, index: number, slot: Slot<V>): Branch<V> {
  const copy = branch.slice();
  copy[index] = slot;
  return copy;
}

/** Returns the new branch and whether a key was added (false when an existing value was replaced). */
function insert<V>(branch: Branch<V>, shift: number, hash: number, entry: Entry<V>): [Branch<V>, boolean] {
  const index = (hash >>> shift) & MASK;
  const slot = branch[index];
  if (slot === undefined) return [withSlot(branch, index, { hash, entries: [entry] }), true];
  if (isBranch(slot)) {
    const [child, added] = insert(slot, shift + BITS, hash, entry);
    return [withSlot(branch, index, child), added];
  }
  if (slot.hash === hash) {
    const at = slot.entries.findIndex((e) => e.key === entry.key);
    if (at < 0) return [withSlot(branch, index, { hash, entries: [...slot.entries, entry] }), true];
    const entries = slot.entries.slice();
    entries[at] = { ...entry, rank: slot.entries[at]!.rank };
    return [withSlot(branch, index, { hash, entries }), false];
  }
  // Two hashes meet in one slot: push the bucket one level down (they differ within 32 bits, so this ends).
  const pushed = withSlot(EMPTY_BRANCH as Branch<V>, (slot.hash >>> (shift + BITS)) & MASK, slot);
  const [child, added] = insert(pushed, shift + BITS, hash, entry);
  return [withSlot(branch, index, child), added];
}

/** Returns the new branch (undefined when it became empty), or the same branch when the key was absent. */
function remove<V>(branch: Branch<V>, shift: number, hash: number, key: string): Branch<V> | undefined {
  const index = (hash >>> shift) & MASK;
  const slot = branch[index];
  let next: Slot<V>;
  if (slot === undefined) return branch;
  if (isBranch(slot)) {
    next = remove(slot, shift + BITS, hash, key);
    if (next === slot) return branch;
  } else {
    if (slot.hash !== hash || !slot.entries.some((e) => e.key === key)) return branch;
    const entries = slot.entries.filter((e) => e.key !== key);
    next = entries.length > 0 ? { hash, entries } : undefined;
  }
  const copy = withSlot(branch, index, next);
  return copy.every((s) => s === undefined) ? undefined : copy;
}

function collect<V>(branch: Branch<V>, into: Entry<V>[]): void {
  for (const slot of branch) {
    if (slot === undefined) continue;
    if (isBranch(slot)) collect(slot, into);
    else into.push(...slot.entries);
  }
}

export class ImmutableMap<V> implements Iterable<[string, V]> {
  private constructor(
    private readonly root: Branch<V>,
    readonly size: number,
    private readonly nextRank: number,
  ) {}

  static empty<V>(): ImmutableMap<V> {
    return new ImmutableMap<V>(EMPTY_BRANCH as Branch<V>, 0, 0);
  }

  get(key: string): V | undefined {
    const hash = hashOf(key);
    let slot: Slot<V> = this.root;
    for (let shift = 0; isBranch(slot); shift += BITS) slot = slot[(hash >>> shift) & MASK];
    if (slot === undefined || slot.hash !== hash) return undefined;
    return slot.entries.find((e) => e.key === key)?.value;
  }

  has(key: string): boolean {
    const hash = hashOf(key);
    let slot: Slot<V> = this.root;
    for (let shift = 0; isBranch(slot); shift += BITS) slot = slot[(hash >>> shift) & MASK];
    return slot !== undefined && slot.hash === hash && slot.entries.some((e) => e.key === key);
  }

  set(key: string, value: V): ImmutableMap<V> {
    const [root, added] = insert(this.root, 0, hashOf(key), { key, value, rank: this.nextRank });
    return new ImmutableMap(root, added ? this.size + 1 : this.size, this.nextRank + 1);
  }

  delete(key: string): ImmutableMap<V> {
    const root = remove(this.root, 0, hashOf(key), key);
    if (root === this.root) return this;
    return new ImmutableMap(root ?? (EMPTY_BRANCH as Branch<V>), this.size - 1, this.nextRank);
  }

  /** Entries in insertion order (sorts on each call: meant for occasional walks, not hot paths). */
  *entries(): IterableIterator<[string, V]> {
    const all: Entry<V>[] = [];
    collect(this.root, all);
    all.sort((a, b) => a.rank - b.rank);
    for (const e of all) yield [e.key, e.value];
  }

  *keys(): IterableIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }
}
