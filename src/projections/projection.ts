import type { RecordedEvent } from '../ports/eventStore.ts';
import type { ProjectionWriter } from '../ports/readModelStore.ts';

/** A read model builder. Bump `version` to have it rebuilt from the start of the history. */
export interface Projection {
  name: string;
  version: number;
  /** The read-model collections it owns (dropped on rebuild). */
  collections: readonly string[];
  canHandle(type: string): boolean;
  handle(event: RecordedEvent, writer: ProjectionWriter): Promise<void>;
}

export function handles(types: readonly string[]): (type: string) => boolean {
  const set = new Set(types);
  return (type) => set.has(type);
}
