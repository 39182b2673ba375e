import type { Decider } from '../domain/decider.ts';
import type { EventStore } from '../ports/eventStore.ts';

export interface Aggregate<State> {
  /** The stream folded through the decider; its initial state for a stream that does not exist. */
  state: State;
  /** What an append must expect to follow what was read: the last event's revision, or 'no_stream'. */
  expectedRevision: 'no_stream' | bigint;
  /** Global position of the stream's last event; null for a stream that does not exist. */
  lastPosition: bigint | null;
}

/** Reads a stream and folds its events through the decider's `evolve`. */
export async function aggregateStream<State, Command, Event extends { type: string; data: unknown }>(
  store: EventStore,
  streamId: string,
  decider: Decider<State, Command, Event>,
): Promise<Aggregate<State>> {
  const history = await store.readStream(streamId);
  let state = decider.initialState();
  for (const e of history) state = decider.evolve(state, { type: e.type, data: e.data } as Event);
  const last = history[history.length - 1];
  return { state, expectedRevision: last ? last.revision : 'no_stream', lastPosition: last ? last.position : null };
}
