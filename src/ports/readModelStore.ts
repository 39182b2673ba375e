/** The read-model port: named collections of JSON documents plus projection checkpoints. */

export type Document = { id: string } & Record<string, unknown>;

/** Equality filter on top-level fields. */
export type Filter = Record<string, string | number | boolean | null>;

/** A value a page can be ordered or bounded by. */
export type SortValue = string | number;

/**
 * The indexes each collection keeps, declared up front: per collection, a list of field lists
 * (equality fields first, then the field a page is ordered by; every adapter appends the id).
 * Adapters create them when they open and drop page indexes no longer declared.
 */
export type IndexDeclarations = Readonly<Record<string, ReadonlyArray<readonly string[]>>>;

/**
 * The fields `find` filters on, per collection (one list per filter). An adapter that reads from a
 * database server (MongoDB) indexes each list so a lookup does not scan the collection; the embedded
 * adapter serves `find` from memory and needs none.
 */
export type LookupDeclarations = Readonly<Record<string, ReadonlyArray<readonly string[]>>>;

/**
 * One page of a keyset (cursor) query: documents matching `filter` and every range, ordered by
 * `orderBy` then `id` in `direction`, strictly after the (value, id) of the previous page's last item.
 * Adapters walk the declared index whose leading fields are the most of the filter's equality fields
 * followed by `orderBy` (see `chooseIndex`), so a deep page costs what the first one does; other
 * filters and ranges are checked on the entries walked. Without such an index the page is still
 * correct, only not indexed.
 */
export interface PageQuery {
  filter: Filter;
  /** Exclusive bounds on top-level fields. A document without the field never matches a range. */
  ranges?: Record<string, { gt?: SortValue; lt?: SortValue }>;
  orderBy: string;
  direction: 'asc' | 'desc';
  after?: { value: SortValue; id: string } | null;
  limit: number;
}

export interface Checkpoint {
  /** Global position of the last event applied, or -1n before any. */
  position: bigint;
  version: number;
}

/**
 * Write access a projection gets while it applies one event. Every write is guarded by the
 * event's position: a document already written by this or a later event is left as it is,
 * so applying the same events twice gives the same documents.
 */
export interface ProjectionWriter {
  get<T extends Document>(collection: string, id: string): Promise<T | null>;
  find<T extends Document>(collection: string, filter: Filter): Promise<T[]>;
  put(collection: string, doc: Document): Promise<void>;
  remove(collection: string, id: string): Promise<void>;
}

/** A document as a rebuild writes it: its final state and the position of the event that last wrote it. */
export interface RebuiltDocument {
  doc: Document;
  position: bigint;
}

/**
 * A projection's collections being rebuilt off to the side (shadow collections). Readers keep
 * seeing the live documents until `commit`, which switches the shadow documents in and sets the
 * checkpoint; a rebuild that is abandoned (`abort`, or a crash) leaves the live documents as they were.
 */
export interface ReadModelRebuild {
  /** Writes final documents to the shadow copy of `collection`: one transaction or bulk write per call. */
  write(collection: string, docs: readonly RebuiltDocument[]): Promise<void>;
  /**
   * Replaces the live documents of every collection of the projection with the shadow ones (a
   * collection nothing was written to ends up empty) and sets the checkpoint to `version` and
   * `position`. Readers see the old documents or the new, never a mix (see each adapter for the unit).
   */
  commit(version: number, position: bigint): Promise<void>;
  /** Drops the shadow copies. */
  abort(): Promise<void>;
}

/** One projection's batch, as `applyBatch` takes it. */
export interface ProjectionBatch {
  projection: string;
  version: number;
  from: bigint;
  to: bigint;
  apply: (writer: (position: bigint) => ProjectionWriter) => Promise<void>;
}

export interface ReadModelStore {
  get<T extends Document>(collection: string, id: string): Promise<T | null>;
  find<T extends Document>(collection: string, filter: Filter, options?: { sortBy?: string; limit?: number }): Promise<T[]>;

  /**
   * A keyset page; see PageQuery. Its documents are read-only (an adapter may hand out the very
   * objects it caches, frozen): copy one to change it.
   */
  page<T extends Document>(collection: string, query: PageQuery): Promise<Array<Readonly<T>>>;

  getCheckpoint(projection: string): Promise<Checkpoint | null>;
  /**
   * Applies a batch of events through `apply` and moves the checkpoint from `from` to `to`
   * in one step (compare-and-set: returns false, writing nothing, when the checkpoint is no longer `from`).
   */
  applyBatch(
    projection: string,
    version: number,
    from: bigint,
    to: bigint,
    apply: (writer: (position: bigint) => ProjectionWriter) => Promise<void>,
  ): Promise<boolean>;
  /**
   * A number that grows whenever the collection's documents as this store serves them may have
   * changed (a committed batch that wrote it, a reset, a reload): a cache of what was read from the
   * collection is current while it is unchanged. Optional: stores that cannot tell cheaply omit it
   * and callers do not cache.
   */
  collectionVersion?(collection: string): number;
  /**
   * Several projections' batches of the same page, each as `applyBatch` would apply it (its own
   * compare-and-set on its own checkpoint), committed together where the adapter can (SQLite: one
   * transaction). Resolves with whether each was applied. A batch whose `apply` throws is left out
   * and the others are still committed, as if each were applied alone; the first such error is then
   * thrown. Optional: callers use `applyBatch` per projection where an adapter lacks it.
   */
  applyBatches?(batches: readonly ProjectionBatch[]): Promise<boolean[]>;
  /** Starts a bulk rebuild of a projection's collections into shadow collections; see ReadModelRebuild. */
  beginRebuild(projection: string, collections: readonly string[]): Promise<ReadModelRebuild>;
  /** Drops a projection's collections and checkpoint, for a rebuild. */
  reset(projection: string, collections: readonly string[]): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
