import type { Document, Filter } from '../../ports/readModelStore.ts';

/** Equality match on top-level fields, shared by the in-memory paths of every adapter. */
export function matches(doc: Document, filter: Filter): boolean {
  for (const key in filter) {
    if ((doc[key] ?? null) !== filter[key]) return false;
  }
  return true;
}

export function sortDocuments(docs: Document[], options: { sortBy?: string; limit?: number }): Document[] {
  if (options.sortBy) {
    const key = options.sortBy;
    docs.sort((a, b) => {
      const x = a[key] as string | number;
      const y = b[key] as string | number;
      if (x < y) return -1;
      if (x > y) return 1;
      // Ties (and values that do not compare) by id, as MongoDB's find sorts (`{ [key]: 1, _id: 1 }`): the same order on every adapter.
      return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    });
  }
  return options.limit === undefined ? docs : docs.slice(0, options.limit);
}
