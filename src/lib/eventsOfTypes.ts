import type { EventStore, RecordedEvent } from '../ports/eventStore.ts';

/** Every event of these types in the log, in order, read a page at a time (for a scan the read models cannot answer). */
export async function* eventsOfTypes(events: Pick<EventStore, 'readAll'>, types: readonly string[]): AsyncGenerator<RecordedEvent> {
  for (let after = -1n; ; ) {
    const page = await events.readAll({ after, limit: 5_000, types });
    if (page.length === 0) return;
    yield* page;
    after = page[page.length - 1]!.position;
  }
}
