import type { FastifyRequest } from 'fastify';
import { validationError } from '../domain/errors.ts';

/**
 * The preHandler of a route that takes no body: nothing, or an empty JSON object. Anything else (a
 * field, an array) is refused as a field a route does not take is on every write, before it acts. A
 * hook rather than a body schema: the OpenAPI document would then call for a body on these routes.
 */
export async function refuseBody(request: FastifyRequest): Promise<void> {
  const body: unknown = request.body;
  // An empty body of any type is none (fetch's `body: ''` arrives as text/plain ''); a JSON `null` is a body.
  if (body === undefined || body === '') return;
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const fields = Object.keys(body);
    if (fields.length === 0) return;
    throw validationError(`body: this route takes no body; unrecognized ${fields.length === 1 ? 'key' : 'keys'}: ${fields.slice(0, 5).map((k) => JSON.stringify(k.slice(0, 100))).join(', ')}`);
  }
  throw validationError('body: this route takes no body.');
}
