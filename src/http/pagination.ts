import { z } from 'zod';
import { validationError } from '../domain/errors.ts';
import type { Document } from '../ports/readModelStore.ts';

/** `limit` and `cursor`, shared by every list route. */
export const pageQuery = z.strictObject({
  // Decimal digits only: a coercion took `0x10`, `1e1` and `+5`, and named a repeated limit NaN.
  // Leading zeros are the number's (`0100` and `00001` alike); 20 digits bound the parse.
  limit: z
    .string()
    .regex(/^[0-9]{1,20}$/, 'must be a whole number from 1 to 100, in decimal digits')
    .transform(Number)
    .pipe(z.number().int().min(1).max(100))
    .default(25)
    // Documented as the integer it is (the parsing above is the query string's): as before, for generated clients.
    .meta({ type: 'integer', minimum: 1, maximum: 100, default: 25, pattern: undefined, description: '1 to 100, default 25' }),
  cursor: z.string().max(1_000).optional().meta({ description: 'nextCursor of the previous page' }),
});

/** `true` / `false` in a query string. */
export const booleanParam = z.enum(['true', 'false']).transform((v) => v === 'true');

/**
 * An ISO 8601 date-time with its offset, whose UTC form still has a four-digit year: the read models
 * compare UTC ISO strings, and `9999-12-31T23:59:59-23:59` would become `+010000-…`, which sorts
 * before every year and turned a filter silently wrong.
 */
export const isoDateTime = z
  .string()
  // RFC 3339 §5.6 allows a lower-case `t` and `z`; zod's ISO pattern takes upper case only.
  .transform((v) => v.toUpperCase())
  .pipe(
    z.iso
      .datetime({ offset: true })
      // zod runs a refinement even when the format check failed: an unparseable value is that check's to report.
      .refine((v) => Number.isNaN(Date.parse(v)) || /^\d{4}-/.test(new Date(v).toISOString()), 'must fall within the years 0000 to 9999 in UTC'),
  )
  .meta({ format: 'date-time' });

/**
 * A valid `isoDateTime` as the UTC ISO string the read models compare, at their millisecond precision.
 * Bounds are exclusive: a lower one (`…After`) is cut to the millisecond, an upper one (`…Before`) with
 * a finer part is rounded up, so an item inside the bound is never left out (`createdBefore=…01.0005Z`
 * keeps an item of `…01.000Z`).
 */
const LAST_MS_OF_9999 = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
export function utcBound(v: string, side: 'after' | 'before'): string {
  const at = new Date(v);
  const finer = /\.\d{3}(\d+)/.exec(v)?.[1] ?? '';
  if (side === 'before' && /[1-9]/.test(finer) && at.getTime() < LAST_MS_OF_9999) at.setTime(at.getTime() + 1);
  return at.toISOString();
}

/** A lower bound (`…After`) as `utcBound` gives it. */
export const isoParam = isoDateTime.transform((v) => utcBound(v, 'after'));
/** An upper bound (`…Before`) as `utcBound` gives it. */
export const isoBeforeParam = isoDateTime.transform((v) => utcBound(v, 'before'));

/** Every list sorts by a string (a time, an address). */
export interface CursorPosition {
  value: string;
  id: string;
}

/** Opaque to clients: base64url of the last item's sort value and id. */
export const encodeCursor = (position: CursorPosition) => Buffer.from(JSON.stringify([position.value, position.id])).toString('base64url');

export function decodeCursor(cursor: string | undefined): CursorPosition | null {
  if (cursor === undefined) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // Another value is none this API wrote.
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') {
      return { value: parsed[0], id: parsed[1] };
    }
  } catch {
    // reported below
  }
  throw validationError('cursor is not a cursor this API returned.');
}

/** Asks the store for one more than the limit, to know whether a next page exists without a second query. */
export function pageOf<T extends Document>(docs: T[], limit: number, sortField: keyof T & string) {
  const items = docs.slice(0, limit);
  const last = items.at(-1);
  const hasMore = docs.length > limit;
  return { items, hasMore, nextCursor: hasMore && last ? encodeCursor({ value: String(last[sortField]), id: last.id }) : null };
}
