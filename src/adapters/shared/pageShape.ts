import type { PageQuery, SortValue } from '../../ports/readModelStore.ts';

const NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** Collection and field names end up in index names and SQL text: only plain identifiers are accepted. */
export function assertName(name: string): string {
  if (!NAME.test(name)) throw new RangeError(`not a plain read-model name: ${JSON.stringify(name)}`);
  return name;
}

/**
 * The index a page query needs: its equality fields (sorted, so one index serves every order of the
 * same filter), then the order field; the id comes last in every adapter.
 */
export function indexFields(collection: string, query: PageQuery): string[] {
  assertName(collection);
  const fields = Object.keys(query.filter).sort().map(assertName);
  for (const field of Object.keys(query.ranges ?? {})) assertName(field);
  return [...fields.filter((f) => f !== query.orderBy), assertName(query.orderBy)];
}

export const isSortValue = (value: unknown): value is SortValue => typeof value === 'string' || typeof value === 'number';
