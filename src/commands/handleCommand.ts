import type { Decider } from '../domain/decider.ts';
import { serviceUnavailable } from '../domain/errors.ts';
import type { DomainEvent } from '../domain/eventSchemas.ts';
import { InTurn } from '../lib/inTurn.ts';
import { type ActingAs, actedBy } from './context.ts';
import { sleep } from '../lib/sleep.ts';
import { type EventStore, type NewEvent, WrongExpectedRevisionError } from '../ports/eventStore.ts';
import { type AggregateReader, aggregateStream } from './aggregateStream.ts';

export interface CommandResult<Event> {
  events: Event[];
  /**
   * The position the read models must include to show the command's outcome: the last appended
   * event's; when the decision appended nothing (already in effect), the last event it was decided on,
   * which a concurrent request may have appended moments ago (null for a stream that does not exist).
   */
  position: bigint | null;
}

/**
 * Commands on one stream through one store object, one at a time, so the callers of a store do not
 * conflict with each other. (Another thread's or process's store can still conflict: decided again.)
 */
const turns = new WeakMap<EventStore, InTurn>();

/**
 * How long a command acting for someone or serving a request (whose client waits for the answer) waits for the
 * commands before it on its stream. An append normally takes milliseconds; one hung on the store
 * (SQLite's busy timeout, EventStoreDB's deadline: 10 s each) would otherwise make every request
 * queued behind it wait for all those before it, one after another. The service's own work (a sent
 * reply's outcome, an agent run's end or lease) waits its turn however long it takes: it records
 * something already done.
 */
export const TURN_MAX_WAIT_MS = 15_000;

/**
 * Loads a stream, folds it through the decider, decides, and appends with the revision it read,
 * with `metadata` and who the context acts for (`actedBy`) in each event's metadata.
 * Commands on the same stream in this process take turns; another process's writer can still make
 * the append conflict, and the command is then decided again on fresh state, after a short random
 * pause, up to `maxAttempts` times. A conflict left after that is 503 SERVICE_UNAVAILABLE (retry),
 * never a failure of the service; so is, for a command acting for someone or serving a request, a turn that has not come
 * within `TURN_MAX_WAIT_MS` (the command is then never decided).
 */
export async function handleCommand<State, Command, Event extends DomainEvent>(
  ctx: { events: EventStore; actor?: ActingAs; requestId?: string },
  streamId: string,
  decider: Decider<State, Command, Event>,
  command: Command,
  metadata: Record<string, unknown> = {},
  options: { maxAttempts?: number; aggregate?: AggregateReader; maxWaitMs?: number } = {},
): Promise<CommandResult<Event>> {
  const store = ctx.events;
  let queue = turns.get(store);
  if (!queue) turns.set(store, (queue = new InTurn()));
  const stamped = { ...actedBy(ctx), ...metadata };
  return queue.run(streamId, () => decideAndAppend(store, streamId, decider, command, stamped, options), {
    maxWaitMs: options.maxWaitMs ?? (ctx.actor || ctx.requestId ? TURN_MAX_WAIT_MS : undefined),
    onTimeout: () => serviceUnavailable('Earlier requests on the same resource are still being written; retry.', 1),
  });
}

async function decideAndAppend<State, Command, Event extends DomainEvent>(
  store: EventStore,
  streamId: string,
  decider: Decider<State, Command, Event>,
  command: Command,
  metadata: Record<string, unknown>,
  options: { maxAttempts?: number; aggregate?: AggregateReader },
): Promise<CommandResult<Event>> {
  const { maxAttempts = 8, aggregate = aggregateStream } = options;
  for (let attempt = 1; ; attempt++) {
    const { state, expectedRevision, lastPosition } = await aggregate(store, streamId, decider);
    const events = decider.decide(command, state);
    if (events.length === 0) return { events, position: lastPosition };
    try {
      const toAppend: NewEvent[] = events.map((e) => ({ type: e.type, data: e.data, metadata }));
      const result = await store.append(streamId, toAppend, expectedRevision);
      return { events, position: result.position };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (attempt >= maxAttempts) throw serviceUnavailable('Another request is changing the same resource; retry.', 1);
      await sleep(Math.random() * 4 * attempt);
    }
  }
}
