import { z } from 'zod';

/** `limit` and `cursor`, as the REST list routes take them. */
export const pageInput = {
  limit: z.number().int().min(1).max(100).default(25).describe('1 to 100, default 25'),
  cursor: z.string().max(1_000).optional().describe('nextCursor of the previous page'),
};
