import { z } from 'zod';
import { CLEAN_TEXT_MESSAGE, isBlank, isCleanText } from '../domain/text.ts';

export const errorResponse = z
  .object({ error: z.object({ code: z.string(), message: z.string() }) })
  .meta({ description: 'Error envelope used by every error response.' });

/** Error responses a route may give, for the OpenAPI document. */
export function errors(...statuses: Array<400 | 401 | 402 | 403 | 404 | 409 | 429 | 503>) {
  return Object.fromEntries(statuses.map((s) => [s, errorResponse])) as Record<number, typeof errorResponse>;
}

export const siteParams = z.object({ siteId: z.string().min(1).max(100) });

/**
 * A resource's id in a path (a conversation, an opportunity, a subscription, an article): an id
 * that names nothing is 404 whatever its length (the router's maxParamLength bounds it), as the
 * spec says of a subscription that "does not exist".
 */
export const resourceId = () => z.string().min(1);

/** The shape of the ids the service makes (ULIDs): anything else names nothing, and no read is made for it. */
export const isServiceId = (id: string) => /^[0-9A-HJKMNP-TV-Z]{26}$/.test(id);

/** The query of a list that takes none: a parameter is refused naming it (`?limit=10` would have been ignored). */
export const noQuery = z.strictObject({});

/** A string field holding text (see isCleanText). */
export const cleanText = () => z.string().refine(isCleanText, CLEAN_TEXT_MESSAGE);
/** A text field that must say something (see isBlank). */
export const nonBlankText = () => cleanText().refine((v) => !isBlank(v), 'must not be blank');
