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

const cached = new WeakMap<EventStore, Map<string, { decider: unknown; aggregate: Aggregate<unknown> }>>();
/** Streams remembered per store; the oldest is forgotten first. */
const CACHED_STREAMS = 10_000;

/**
 * `aggregateStream` for streams read on every request and rarely written (a site's agent
 * settings, a team's suppression list): when the store can tell a stream's last position cheaply
 * and it is the one folded last time, the fold is reused instead of reading and parsing the stream
 * again. A changed (or erased and rewritten) stream has another last position, since positions are
 * never reused, and is read in full. Deciders' states are immutable, so sharing one is safe.
 */
export async function aggregateStreamCached<State, Command, Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<State, Command, Event>,
): Promise<Aggregate<State>> {
  if (!store.streamLastPosition) return aggregateStream(store, streamId, decider);
  let streams = cached.get(store);
  if (!streams) cached.set(store, (streams = new Map()));
  const last = await store.streamLastPosition(streamId);
  const hit = streams.get(streamId);
  if (hit && hit.decider === decider && hit.aggregate.lastPosition === last) return hit.aggregate as Aggregate<State>;
  const aggregate = await aggregateStream(store, streamId, decider);
  streams.delete(streamId);
  if (streams.size >= CACHED_STREAMS) streams.delete(streams.keys().next().value!);
  streams.set(streamId, { decider, aggregate });
  return aggregate;
}
