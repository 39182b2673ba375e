import type { Clock } from '../ports/clock.ts';
import type { EventStore } from '../ports/eventStore.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';
import type { SecretBox } from '../ports/secretBox.ts';

/** The ports a command handler may use. */
export interface CommandContext {
  events: EventStore;
  readModels: ReadModelStore;
  clock: Clock;
  secrets: SecretBox;
  newId(): string;
}
