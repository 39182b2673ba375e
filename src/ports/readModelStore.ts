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

export interface ReadModelStore {
  get<T extends Document>(collection: string, id: string): Promise<T | null>;
  find<T extends Document>(collection: string, filter: Filter, options?: { sortBy?: string; limit?: number }): Promise<T[]>;

  /** A keyset page; see PageQuery. */
  page<T extends Document>(collection: string, query: PageQuery): Promise<T[]>;

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
  /** Drops a projection's collections and checkpoint, for a rebuild. */
  reset(projection: string, collections: readonly string[]): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
