import type { Clock } from '../ports/clock.ts';
import type { EventStore } from '../ports/eventStore.ts';
import type { SecretBox } from '../ports/secretBox.ts';

/** The ports a command handler may use: the write side reads event streams, never read models. */
export interface CommandContext {
  events: EventStore;
  clock: Clock;
  secrets: SecretBox;
  newId(): string;
}
