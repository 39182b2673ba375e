import { z } from 'zod';
import { type AnyEvent, type DomainEvent, type EventSchemas, domainEventSchemas } from '../domain/eventSchemas.ts';
import type { RecordedEvent } from '../ports/eventStore.ts';

/** A stored event whose data does not have its type's shape: named by stream, revision and type. */
export class MalformedEventError extends Error {
  override readonly name = 'MalformedEventError';
  constructor(
    readonly streamId: string,
    readonly revision: bigint,
    readonly eventType: string,
    readonly issues: string,
  ) {
    super(`malformed ${eventType} event at revision ${revision} of stream ${streamId}: ${issues}`);
  }
}

/**
 * The store's edge: a recorded event as one of `E`'s events, its data checked against the schema of
 * its type. Null for a type `schemas` does not know (callers skip it, as they always have);
 * MalformedEventError when the data does not fit.
 */
export function parseEvent<E extends AnyEvent>(recorded: RecordedEvent, schemas: EventSchemas<E>): E | null {
  if (!Object.hasOwn(schemas, recorded.type)) return null;
  const schema: z.ZodType = schemas[recorded.type as E['type']];
  const result = schema.safeParse(recorded.data);
  if (!result.success) throw new MalformedEventError(recorded.streamId, recorded.revision, recorded.type, z.prettifyError(result.error));
  // The schema checked is the one for this type, so the pair is a member of E (the compiler cannot correlate the two).
  return { type: recorded.type, data: result.data } as E;
}

/**
 * The schemas of a subset of the stored events (a decider's union). Every stored type has exactly
 * one schema, so the registry restricted to E's types is E's schemas.
 */
export const eventSchemasOf = <E extends DomainEvent>(): EventSchemas<E> => domainEventSchemas as unknown as EventSchemas<E>;

/**
 * Any stored event the service knows, typed; null for an unknown type. Several projections handle
 * the same recorded event of a page: it is checked against its schema once, not once per projection.
 */
export const toDomainEvent = (recorded: RecordedEvent): DomainEvent | null => {
  const cached = parsed.get(recorded);
  if (cached !== undefined) return cached;
  const event = parseEvent(recorded, domainEventSchemas);
  parsed.set(recorded, event);
  return event;
};
const parsed = new WeakMap<RecordedEvent, DomainEvent | null>();
