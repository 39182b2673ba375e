import { randomUUID } from 'node:crypto';

/**
 * A request's id: a new UUID, never the client's (an auditor groups events by it, so a client must
 * not be able to make its requests share one). It is in the request's log lines, in its answer's
 * `X-Request-Id` header and in the metadata of the events its commands append (`requestId`).
 */
export const newRequestId = (): string => randomUUID();
