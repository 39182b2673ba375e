import type { EventStore } from '../ports/eventStore.ts';

/** The store a background role (webhook delivery, agents) appends through: see `EventStore.offThreadAppends`. */
export function backgroundEventStore(events: EventStore): EventStore {
  return events.offThreadAppends?.() ?? events;
}
