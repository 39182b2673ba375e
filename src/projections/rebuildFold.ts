import type { Document, Filter, ProjectionWriter, ReadModelStore, RebuiltDocument } from '../ports/readModelStore.ts';
import { matches } from '../adapters/shared/filter.ts';
import type { Projection } from './projection.ts';

/**
 * A projection's documents folded in memory from the start of the history, for a bulk rebuild: the
 * projection writes through the same ProjectionWriter it gets when following the log, with the same
 * position guard, but nothing is stored until `flush` writes the final documents in bulk. Reads of
 * collections the projection does not own go to the store as they are now (as they do when following).
 */
export class RebuildFold {
  private readonly owned: Map<string, Map<string, RebuiltDocument>>;
  private position = -1n;
  readonly writer: ProjectionWriter;

  constructor(
    readonly projection: Projection,
    private readonly store: ReadModelStore,
  ) {
    this.owned = new Map(projection.collections.map((c) => [c, new Map()]));
    const own = (collection: string): Map<string, RebuiltDocument> => {
      const docs = this.owned.get(collection);
      if (!docs) throw new Error(`projection ${projection.name} writes collection ${collection}, which it does not own`);
      return docs;
    };
    this.writer = {
      get: async <T extends Document>(collection: string, id: string) => {
        const docs = this.owned.get(collection);
        if (!docs) return this.store.get<T>(collection, id);
        const entry = docs.get(id);
        return entry ? ({ ...entry.doc } as T) : null;
      },
      find: async <T extends Document>(collection: string, filter: Filter) => {
        const docs = this.owned.get(collection);
        if (!docs) return this.store.find<T>(collection, filter);
        const out: T[] = [];
        for (const entry of docs.values()) if (matches(entry.doc, filter)) out.push({ ...entry.doc } as T);
        return out;
      },
      put: async (collection, doc) => {
        const docs = own(collection);
        const existing = docs.get(doc.id);
        if (existing && existing.position >= this.position) return;
        docs.set(doc.id, { doc, position: this.position });
      },
      remove: async (collection, id) => {
        const docs = own(collection);
        const existing = docs.get(id);
        if (!existing || existing.position >= this.position) return;
        docs.delete(id);
      },
    };
  }

  /** The writer for the event at `position` (events are applied one after another). */
  at(position: bigint): ProjectionWriter {
    this.position = position;
    return this.writer;
  }

  /** Documents held now, across the projection's collections. */
  get size(): number {
    let n = 0;
    for (const docs of this.owned.values()) n += docs.size;
    return n;
  }

  /** The final documents, `batch` at a time per collection. */
  *batches(batch: number): Generator<[string, RebuiltDocument[]]> {
    for (const [collection, docs] of this.owned) {
      let chunk: RebuiltDocument[] = [];
      for (const entry of docs.values()) {
        chunk.push(entry);
        if (chunk.length >= batch) {
          yield [collection, chunk];
          chunk = [];
        }
      }
      if (chunk.length > 0) yield [collection, chunk];
    }
  }
}
