import { z } from 'zod';

export const errorResponse = z
  .object({ error: z.object({ code: z.string(), message: z.string() }) })
  .meta({ description: 'Error envelope used by every error response.' });

/** Error responses a route may give, for the OpenAPI document. */
export function errors(...statuses: Array<400 | 401 | 402 | 403 | 404 | 409 | 429 | 503>) {
  return Object.fromEntries(statuses.map((s) => [s, errorResponse])) as Record<number, typeof errorResponse>;
}

export const siteParams = z.object({ siteId: z.string().min(1).max(100) });
