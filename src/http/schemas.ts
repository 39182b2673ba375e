import { z } from 'zod';

export const errorResponse = z
  .object({ error: z.object({ code: z.string(), message: z.string() }) })
  .meta({ description: 'Error envelope used by every error response.' });

/** Error responses a route may give, for the OpenAPI document. */
export function errors(...statuses: Array<400 | 401 | 402 | 403 | 404 | 409 | 429 | 503>) {
  return Object.fromEntries(statuses.map((s) => [s, errorResponse])) as Record<number, typeof errorResponse>;
}

export const siteParams = z.object({ siteId: z.string().min(1).max(100) });

/** C0 control characters other than the white space ones (tab, line feed, vertical tab, form feed, carriage return): NUL among them. */
const CONTROL = /[\u0000-\u0008\u000E-\u001F]/;
/** A UTF-16 surrogate without its other half: JSON can carry one, no mail or UTF-8 store can. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text that can be stored and mailed as given: no NUL or other control character, no lone surrogate. */
export const isCleanText = (v: string) => !CONTROL.test(v) && !LONE_SURROGATE.test(v);
export const CLEAN_TEXT_MESSAGE = 'must be text: no NUL or other control character, no unpaired surrogate';

/** Blank: nothing but white space and invisible characters (control and format ones, a zero-width space say). */
export const isBlank = (v: string) => /^[\s\p{Cc}\p{Cf}]*$/u.test(v);

/** A string field holding text (see isCleanText). */
export const cleanText = () => z.string().refine(isCleanText, CLEAN_TEXT_MESSAGE);
/** A text field that must say something (see isBlank). */
export const nonBlankText = () => cleanText().refine((v) => !isBlank(v), 'must not be blank');
