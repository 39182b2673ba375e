import type { Document, Filter, PageQuery, SortValue } from '../../ports/readModelStore.ts';
import { isSortValue } from '../shared/pageShape.ts';

/** What the index holds per document: the store's cache entry (the document and the position that wrote it). */
export interface IndexedEntry {
  doc: Document;
  position: bigint;
}

/**
 * SQLite's order of the values a page sorts by: numbers before text, text by code unit (the same
 * as SQLite's byte order of UTF-8 for every character below U+E000; ids and timestamps are ASCII).
 */
export function compareSortValues(a: SortValue, b: SortValue): number {
  if (typeof a !== typeof b) return typeof a === 'number' ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A field's value as the bucket key sees it: a missing field is null, as the filter's equality has it. */
const keyPart = (value: unknown): string | null => {
  const v = value ?? null;
  if (v === null) return 'null';
  if (typeof v === 'string') return `s${v}`;
  if (typeof v === 'number') return `n${v}`;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return null; // an object or array equals no filter value
};

/**
 * One declared index (equality fields, then the order field) of one collection, kept in memory:
 * per combination of equality values a bucket of cache entries sorted by (order value, id), so a
 * page is a binary search to its cursor and a walk of `limit` entries, like SQLite's walk of the
 * same index in the file. A document whose order value is not a string or a number is counted
 * aside; a bucket holding one answers nothing (`walk` gives null) and the store runs the page in SQL,
 * whose order for such values it does not copy.
 */
export class OrderedIndex {
  private readonly equality: readonly string[];
  private readonly order: string;
  private readonly buckets = new Map<string, IndexedEntry[]>();
  private readonly unordered = new Map<string, number>();

  constructor(fields: readonly string[], entries: Iterable<IndexedEntry>) {
    this.equality = fields.slice(0, -1);
    this.order = fields.at(-1)!;
    for (const entry of entries) {
      const key = this.bucketOf(entry.doc);
      if (key === null) continue;
      if (!isSortValue(entry.doc[this.order])) this.unordered.set(key, (this.unordered.get(key) ?? 0) + 1);
      else this.bucket(key).push(entry);
    }
    for (const bucket of this.buckets.values()) bucket.sort((a, b) => this.compare(a, b.doc[this.order] as SortValue, b.doc.id));
  }

  /** Takes a change of the cache into account: `before` left, `after` came (either may be absent). */
  update(before: IndexedEntry | undefined, after: IndexedEntry | undefined): void {
    if (before) this.remove(before);
    if (after) this.add(after);
  }

  /**
   * The entries of a page in order, or null when the bucket holds documents without a sortable
   * order value. `query.filter` holds every equality field of this index (see `chooseIndex`); the
   * other filters and the ranges are checked on the walk.
   */
  walk(query: PageQuery): IndexedEntry[] | null {
    const key = this.bucketOfFilter(query.filter);
    if (key === null) return [];
    if (this.unordered.has(key)) return null;
    const bucket = this.buckets.get(key);
    const out: IndexedEntry[] = [];
    if (!bucket) return out;
    const desc = query.direction === 'desc';
    const after = query.after;
    let i: number;
    if (desc) i = after ? this.lowerBound(bucket, after.value, after.id) - 1 : bucket.length - 1;
    else i = after ? this.upperBound(bucket, after.value, after.id) : 0;
    const step = desc ? -1 : 1;
    for (; i >= 0 && i < bucket.length && out.length < query.limit; i += step) {
      const entry = bucket[i]!;
      if (matchesRest(entry.doc, query)) out.push(entry);
    }
    return out;
  }

  private add(entry: IndexedEntry): void {
    const key = this.bucketOf(entry.doc);
    if (key === null) return;
    const value = entry.doc[this.order];
    if (!isSortValue(value)) {
      this.unordered.set(key, (this.unordered.get(key) ?? 0) + 1);
      return;
    }
    const bucket = this.bucket(key);
    // New documents are usually the newest: appended without a search.
    const last = bucket.at(-1);
    if (!last || this.compare(last, value, entry.doc.id) < 0) bucket.push(entry);
    else bucket.splice(this.lowerBound(bucket, value, entry.doc.id), 0, entry);
  }

  private remove(entry: IndexedEntry): void {
    const key = this.bucketOf(entry.doc);
    if (key === null) return;
    const value = entry.doc[this.order];
    if (!isSortValue(value)) {
      const left = (this.unordered.get(key) ?? 1) - 1;
      if (left > 0) this.unordered.set(key, left);
      else this.unordered.delete(key);
      return;
    }
    const bucket = this.buckets.get(key);
    if (!bucket) return;
    const at = this.lowerBound(bucket, value, entry.doc.id);
    if (bucket[at]?.doc.id === entry.doc.id) bucket.splice(at, 1);
    if (bucket.length === 0) this.buckets.delete(key);
  }

  private bucket(key: string): IndexedEntry[] {
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = []));
    return bucket;
  }

  private bucketOf(doc: Document): string | null {
    return this.keyOf((field) => doc[field]);
  }

  private bucketOfFilter(filter: Filter): string | null {
    return this.keyOf((field) => filter[field]);
  }

  private keyOf(valueOf: (field: string) => unknown): string | null {
    let key = '';
    for (const field of this.equality) {
      const part = keyPart(valueOf(field));
      if (part === null) return null;
      key += `${part.length}:${part}`;
    }
    return key;
  }

  /** The entry against (value, id): negative when it comes first. */
  private compare(entry: IndexedEntry, value: SortValue, id: string): number {
    return compareSortValues(entry.doc[this.order] as SortValue, value) || (entry.doc.id < id ? -1 : entry.doc.id > id ? 1 : 0);
  }

  /** The first place whose entry is not before (value, id). */
  private lowerBound(bucket: IndexedEntry[], value: SortValue, id: string): number {
    let lo = 0;
    let hi = bucket.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(bucket[mid]!, value, id) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The first place whose entry comes after (value, id). */
  private upperBound(bucket: IndexedEntry[], value: SortValue, id: string): number {
    let lo = 0;
    let hi = bucket.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(bucket[mid]!, value, id) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The page's equality filters and ranges, as the SQL page checks them (a range never matches a missing or unsortable value). */
function matchesRest(doc: Document, query: PageQuery): boolean {
  for (const field in query.filter) if ((doc[field] ?? null) !== query.filter[field]) return false;
  for (const field in query.ranges) {
    const bounds = query.ranges[field]!;
    if (bounds.gt === undefined && bounds.lt === undefined) continue;
    const value = doc[field];
    if (!isSortValue(value)) return false;
    if (bounds.gt !== undefined && compareSortValues(value, bounds.gt) <= 0) return false;
    if (bounds.lt !== undefined && compareSortValues(value, bounds.lt) >= 0) return false;
  }
  return true;
}
