import type { IndexDeclarations, PageQuery, SortValue } from '../../ports/readModelStore.ts';

const NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** Collection and field names end up in index names and SQL text: only plain identifiers are accepted. */
export function assertName(name: string): string {
  if (!NAME.test(name)) throw new RangeError(`not a plain read-model name: ${JSON.stringify(name)}`);
  return name;
}

/** Checks every name a page query puts into SQL text or an index name. */
export function assertPageNames(collection: string, query: PageQuery): void {
  assertName(collection);
  assertName(query.orderBy);
  for (const field of Object.keys(query.filter)) assertName(field);
  for (const field of Object.keys(query.ranges ?? {})) assertName(field);
}

/** Checks the declarations once, when an adapter opens: names, and the order field last in each index. */
export function assertDeclarations(indexes: IndexDeclarations): void {
  for (const [collection, list] of Object.entries(indexes)) {
    assertName(collection);
    for (const fields of list) {
      if (fields.length === 0) throw new RangeError(`an index of ${collection} has no fields`);
      fields.forEach(assertName);
      if (new Set(fields).size !== fields.length) throw new RangeError(`an index of ${collection} repeats a field: ${fields.join(', ')}`);
    }
  }
}

/**
 * The declared index a page walks: its last field is `orderBy` and every field before it is one of
 * the query's equality fields, so the walk yields the page's order (no sort) and seeks the equality
 * prefix; among those, the one with the most equality fields (the first declared on a tie). Null
 * when none fits: the adapter runs the page without one.
 */
export function chooseIndex(indexes: IndexDeclarations, collection: string, query: PageQuery): readonly string[] | null {
  let best: readonly string[] | null = null;
  for (const fields of indexes[collection] ?? []) {
    if (fields.at(-1) !== query.orderBy) continue;
    if (!fields.slice(0, -1).every((f) => Object.hasOwn(query.filter, f))) continue;
    if (!best || fields.length > best.length) best = fields;
  }
  return best;
}

export const isSortValue = (value: unknown): value is SortValue => typeof value === 'string' || typeof value === 'number';
