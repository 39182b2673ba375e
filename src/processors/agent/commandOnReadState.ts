import type { Aggregate } from '../../commands/aggregateStream.ts';
import { type CommandResult, handleCommand } from '../../commands/handleCommand.ts';
import type { Decider } from '../../domain/decider.ts';
import type { DomainEvent } from '../../domain/eventSchemas.ts';
import { type EventStore, WrongExpectedRevisionError } from '../../ports/eventStore.ts';

/**
 * `handleCommand` on a stream the caller has just read, without reading it again: decides on that
 * state and appends with the revision it was read at. When the stream moved since (the append
 * conflicts) or the decision on it is empty, it falls back to `handleCommand`, which decides on a
 * fresh read, so the outcome is the same as calling `handleCommand` directly.
 */
export async function commandOnReadState<State, Command, Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<State, Command, Event>,
  read: Aggregate<State>,
  command: Command,
  metadata: Record<string, unknown>,
): Promise<CommandResult<Event>> {
  const events = decider.decide(command, read.state);
  if (events.length === 0) return handleCommand({ events: store }, streamId, decider, command, metadata);
  try {
    const result = await store.append(streamId, events.map((e) => ({ type: e.type, data: e.data, metadata })), read.expectedRevision);
    return { events, position: result.position };
  } catch (error) {
    if (error instanceof WrongExpectedRevisionError) return handleCommand({ events: store }, streamId, decider, command, metadata);
    throw error;
  }
}
