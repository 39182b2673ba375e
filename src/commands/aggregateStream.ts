import type { Decider } from '../domain/decider.ts';
import type { DomainEvent } from '../domain/eventSchemas.ts';
import { eventSchemasOf, parseEvent } from '../lib/parseEvent.ts';
import type { EventStore } from '../ports/eventStore.ts';

export interface Aggregate<State> {
  /** The stream folded through the decider; its initial state for a stream that does not exist. */
  state: State;
  /** What an append must expect to follow what was read: the last event's revision, or 'no_stream'. */
  expectedRevision: 'no_stream' | bigint;
  /** Global position of the stream's last event; null for a stream that does not exist. */
  lastPosition: bigint | null;
}

/** Reads a stream and folds its events, checked against their schemas, through the decider's `evolve`; unknown types are skipped. */
export async function aggregateStream<State, Command, Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<State, Command, Event>,
): Promise<Aggregate<State>> {
  const history = await store.readStream(streamId);
  const schemas = eventSchemasOf<Event>();
  let state = decider.initialState();
  for (const recorded of history) {
    const event = parseEvent(recorded, schemas);
    if (event) state = decider.evolve(state, event);
  }
  const last = history[history.length - 1];
  return { state, expectedRevision: last ? last.revision : 'no_stream', lastPosition: last ? last.position : null };
}
