import type { Decider } from '../domain/decider.ts';
import type { DomainEvent } from '../domain/eventSchemas.ts';
import { eventSchemasOf, parseEvent } from '../lib/parseEvent.ts';
import type { EventStore, RecordedEvent } from '../ports/eventStore.ts';

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
  const empty: Aggregate<State> = { state: decider.initialState(), expectedRevision: 'no_stream', lastPosition: null };
  return foldOnto(empty, await store.readStream(streamId), decider);
}

/** What an aggregate becomes with `history` (the events after it) folded on. */
function foldOnto<State, Command, Event extends DomainEvent>(
  aggregate: Aggregate<State>,
  history: readonly RecordedEvent[],
  decider: Decider<State, Command, Event>,
): Aggregate<State> {
  const schemas = eventSchemasOf<Event>();
  let state = aggregate.state;
  for (const recorded of history) {
    const event = parseEvent(recorded, schemas);
    if (event) state = decider.evolve(state, event);
  }
  const last = history[history.length - 1];
  return last ? { state, expectedRevision: last.revision, lastPosition: last.position } : aggregate;
}

/** Reads a stream's aggregate: `aggregateStream` or one of the cached readers below. */
export type AggregateReader = <State, Command, Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<State, Command, Event>,
) => Promise<Aggregate<State>>;

/** The last fold of up to `capacity` streams per store, the oldest forgotten first. */
class RememberedFolds {
  private readonly stores = new WeakMap<EventStore, Map<string, { decider: unknown; aggregate: Aggregate<unknown> }>>();
  constructor(private readonly capacity: number) {}

  /** The stream's last fold, if it was made with this decider. */
  get<State>(store: EventStore, streamId: string, decider: unknown): Aggregate<State> | undefined {
    const hit = this.stores.get(store)?.get(streamId);
    return hit && hit.decider === decider ? (hit.aggregate as Aggregate<State>) : undefined;
  }

  set(store: EventStore, streamId: string, decider: unknown, aggregate: Aggregate<unknown>): void {
    let streams = this.stores.get(store);
    if (!streams) this.stores.set(store, (streams = new Map()));
    streams.delete(streamId);
    if (streams.size >= this.capacity) streams.delete(streams.keys().next().value!);
    streams.set(streamId, { decider, aggregate });
  }
}

/** Folds of growing streams (they can be large: a grant's holds every token it issued). */
const folded = new RememberedFolds(1_000);

/**
 * `aggregateStream` for streams that keep growing and are written on most reads (an OAuth grant
 * gains three events per refresh, thousands in a year): the last fold of each stream is kept, and
 * the next read takes only the events from its last revision on. The event at that revision must
 * still be the one folded (same position; positions are never reused), so a stream erased and
 * written again, or a store that reads no partial stream, is read in full. Deciders' states are
 * immutable, so folding on from a shared one is safe.
 */
export async function aggregateStreamFolding<State, Command, Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<State, Command, Event>,
): Promise<Aggregate<State>> {
  const known = folded.get<State>(store, streamId, decider);
  let aggregate: Aggregate<State> | null = null;
  if (known && known.expectedRevision !== 'no_stream') {
    const from = known.expectedRevision;
    const [first, ...after] = await store.readStream(streamId, { fromRevision: from });
    const continues = after.every((e, i) => e.revision === from + BigInt(i + 1));
    if (first && first.revision === from && first.position === known.lastPosition && continues) aggregate = foldOnto(known, after, decider);
  }
  aggregate ??= await aggregateStream(store, streamId, decider);
  folded.set(store, streamId, decider, aggregate);
  return aggregate;
}

/** Folds of streams read on every request. */
const cached = new RememberedFolds(10_000);

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
  const last = await store.streamLastPosition(streamId);
  const hit = cached.get<State>(store, streamId, decider);
  if (hit && hit.lastPosition === last) return hit;
  const aggregate = await aggregateStream(store, streamId, decider);
  cached.set(store, streamId, decider, aggregate);
  return aggregate;
}
