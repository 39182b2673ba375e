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

/** A `canHandle` that also lists its types (so the event store can mark them: see credentialProjections.ts). */
export type TypeFilter = ((type: string) => boolean) & { readonly types: readonly string[] };

/** Every event type the projections handle, when each lists its own (`handles`); null when one does not. */
export function typesHandledBy(projections: readonly Projection[]): string[] | null {
  const types = new Set<string>();
  for (const p of projections) {
    const listed = (p.canHandle as Partial<TypeFilter>).types;
    if (!listed) return null;
    for (const type of listed) types.add(type);
  }
  return [...types];
}

export function handles(types: readonly string[]): TypeFilter {
  const set = new Set(types);
  return Object.assign((type: string) => set.has(type), { types: [...types] });
}
