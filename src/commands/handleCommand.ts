import type { Decider } from '../domain/decider.ts';
import type { DomainEvent } from '../domain/eventSchemas.ts';
import { type EventStore, type NewEvent, WrongExpectedRevisionError } from '../ports/eventStore.ts';
import { type AggregateReader, aggregateStream } from './aggregateStream.ts';

export interface CommandResult<Event> {
  events: Event[];
  /** Global position of the last appended event; null when the decision appended nothing. */
  position: bigint | null;
}

/**
 * Loads a stream, folds it through the decider, decides, and appends with the revision it read.
 * A concurrent writer makes the append conflict; the command is then decided again on fresh state.
 */
export async function handleCommand<State, Command, Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<State, Command, Event>,
  command: Command,
  metadata: Record<string, unknown> = {},
  options: { maxAttempts?: number; aggregate?: AggregateReader } = {},
): Promise<CommandResult<Event>> {
  const { maxAttempts = 5, aggregate = aggregateStream } = options;
  for (let attempt = 1; ; attempt++) {
    const { state, expectedRevision } = await aggregate(store, streamId, decider);
    const events = decider.decide(command, state);
    if (events.length === 0) return { events, position: null };
    try {
      const toAppend: NewEvent[] = events.map((e) => ({ type: e.type, data: e.data, metadata }));
      const result = await store.append(streamId, toAppend, expectedRevision);
      return { events, position: result.position };
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError && attempt < maxAttempts) continue;
      throw error;
    }
  }
}
