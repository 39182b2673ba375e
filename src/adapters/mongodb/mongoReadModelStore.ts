import { MongoClient, MongoServerError, type Collection, type Db, type Filter as MongoFilter, type IndexSpecification, type Sort } from 'mongodb';
import type {
  Checkpoint,
  Document,
  Filter,
  IndexDeclarations,
  LookupDeclarations,
  PageQuery,
  ProjectionWriter,
  ReadModelRebuild,
  ReadModelStore,
  RebuiltDocument,
} from '../../ports/readModelStore.ts';
import { assertDeclarations, assertPageNames, chooseIndex } from '../shared/pageShape.ts';

/** A read-model document as stored: the document itself plus its key and the position that last wrote it. */
interface StoredDocument {
  _id: string;
  /** `encodePosition(position)`: fixed-width decimal, so string order is numeric order. */
  _position: string;
  [field: string]: unknown;
}

interface StoredCheckpoint {
  _id: string;
  version: number;
  /** Decimal bigint, `-1` before any event; compared for equality only. */
  position: string;
}

const POSITION_WIDTH = 20; // 2^64 - 1 has 20 digits

/**
 * MongoDB read models: collection `x` is stored as `rm_x`, checkpoints in `checkpoints`.
 * Writes are not transactional (a standalone server is enough): every document write is guarded by
 * the writing event's position and the checkpoint moves last with compare-and-set, so a batch that is
 * replayed, or that lost the race for the checkpoint, leaves the same documents as a single run.
 */
export class MongoReadModelStore implements ReadModelStore {
  private readonly client: MongoClient;
  private readonly db: Db;
  private readonly ownsClient: boolean;
  private readonly checkpoints: Collection<StoredCheckpoint>;
  /**
   * With a url the store owns (and closes) its client; with a `MongoClient` the caller does.
   * `indexes`: what each collection's pages walk (see IndexDeclarations); `lookups`: the fields its
   * `find`s filter on (see LookupDeclarations); `connect` creates both.
   */
  constructor(
    client: MongoClient | string,
    dbName: string,
    private readonly indexes: IndexDeclarations = {},
    private readonly lookups: LookupDeclarations = {},
  ) {
    assertDeclarations(indexes);
    this.ownsClient = typeof client === 'string';
    this.client = typeof client === 'string' ? new MongoClient(client) : client;
    this.db = this.client.db(dbName);
    this.checkpoints = this.db.collection<StoredCheckpoint>('checkpoints');
  }

  static async connect(url: string, dbName: string, indexes: IndexDeclarations = {}, lookups: LookupDeclarations = {}): Promise<MongoReadModelStore> {
    const store = new MongoReadModelStore(url, dbName, indexes, lookups);
    await store.client.connect();
    await store.ensureIndexes();
    return store;
  }

  /** Creates the declared page and lookup indexes and drops those of a declared collection that are no longer declared. */
  async ensureIndexes(): Promise<void> {
    for (const collection of new Set([...Object.keys(this.indexes), ...Object.keys(this.lookups)])) {
      const coll = this.collection(collection);
      const declared = this.declaredIndexes(collection);
      const names = new Set(declared.map((index) => index.name));
      const existing = await coll.listIndexes().toArray().catch((error: unknown) => {
        if (error instanceof MongoServerError && error.code === 26) return []; // NamespaceNotFound: no collection yet
        throw error;
      });
      for (const index of existing) {
        const name = String(index.name);
        if ((name.startsWith('page__') || name.startsWith('lookup__')) && !names.has(name)) await coll.dropIndex(name);
      }
      for (const { spec, name } of declared) await coll.createIndex(spec, { name });
    }
  }

  /** A collection's page indexes (ending in `_id`, which orders a page's ties) and lookup indexes. */
  private declaredIndexes(collection: string): Array<{ spec: IndexSpecification; name: string }> {
    return [
      ...(this.indexes[collection] ?? []).map((fields) => ({ spec: [...fields.map((f): [string, 1] => [f, 1]), ['_id', 1]] as IndexSpecification, name: indexName(fields) })),
      ...(this.lookups[collection] ?? []).map((fields) => ({ spec: fields.map((f): [string, 1] => [f, 1]) as IndexSpecification, name: lookupName(fields) })),
    ];
  }

  private collection(name: string): Collection<StoredDocument> {
    return this.db.collection<StoredDocument>(`rm_${name}`);
  }

  async get<T extends Document>(collection: string, id: string): Promise<T | null> {
    const stored = await this.collection(collection).findOne({ _id: id });
    return stored ? (toDocument(stored) as T) : null;
  }

  async find<T extends Document>(collection: string, filter: Filter, options: { sortBy?: string; limit?: number } = {}): Promise<T[]> {
    if (options.limit !== undefined && options.limit <= 0) return [];
    let cursor = this.collection(collection).find(filter as MongoFilter<StoredDocument>);
    if (options.sortBy) cursor = cursor.sort({ [options.sortBy]: 1, _id: 1 });
    if (options.limit !== undefined) cursor = cursor.limit(options.limit);
    return (await cursor.toArray()).map((stored) => toDocument(stored) as T);
  }

  async page<T extends Document>(collection: string, query: PageQuery): Promise<Array<Readonly<T>>> {
    if (query.limit <= 0) return [];
    assertPageNames(collection, query);
    const coll = this.collection(collection);
    const index = chooseIndex(this.indexes, collection, query);
    const clauses: Array<MongoFilter<StoredDocument>> = [{ ...query.filter } as MongoFilter<StoredDocument>];
    for (const [field, bounds] of Object.entries(query.ranges ?? {})) {
      const range: { $gt?: string | number; $lt?: string | number } = {};
      if (bounds.gt !== undefined) range.$gt = bounds.gt;
      if (bounds.lt !== undefined) range.$lt = bounds.lt;
      if (bounds.gt !== undefined || bounds.lt !== undefined) clauses.push({ [field]: range } as MongoFilter<StoredDocument>);
    }
    const desc = query.direction === 'desc';
    if (query.after) {
      const beyond = desc ? '$lt' : '$gt';
      // The plain bound first: the index scan starts at the cursor; the $or only settles the ties by id.
      clauses.push({ [query.orderBy]: { [desc ? '$lte' : '$gte']: query.after.value } } as MongoFilter<StoredDocument>);
      clauses.push({
        $or: [{ [query.orderBy]: { [beyond]: query.after.value } }, { [query.orderBy]: query.after.value, _id: { [beyond]: query.after.id } }],
      } as MongoFilter<StoredDocument>);
    }
    const sort: Sort = [
      [query.orderBy, desc ? -1 : 1],
      ['_id', desc ? -1 : 1],
    ];
    let cursor = coll.find({ $and: clauses }).sort(sort).limit(query.limit);
    if (index) cursor = cursor.hint(indexName(index));
    const stored = await cursor.toArray();
    return stored.map((s) => toDocument(s) as T);
  }

  async getCheckpoint(projection: string): Promise<Checkpoint | null> {
    const stored = await this.checkpoints.findOne({ _id: projection });
    return stored ? { position: BigInt(stored.position), version: stored.version } : null;
  }

  async applyBatch(
    projection: string,
    version: number,
    from: bigint,
    to: bigint,
    apply: (writer: (position: bigint) => ProjectionWriter) => Promise<void>,
  ): Promise<boolean> {
    // Cheap early exit so a stale runner writes nothing; the compare-and-set below is what decides.
    const current = await this.getCheckpoint(projection);
    if ((current?.position ?? -1n) !== from) return false;

    const writerAt = (position: bigint): ProjectionWriter => {
      const pos = encodePosition(position);
      return {
        get: (collection, id) => this.get(collection, id),
        find: (collection, filter) => this.find(collection, filter),
        put: async (collection, doc) => {
          const replacement = { ...(JSON.parse(JSON.stringify(doc)) as Document), _position: pos };
          try {
            await this.collection(collection).replaceOne(
              { _id: doc.id, $or: [{ _position: { $lt: pos } }, { _position: { $exists: false } }] },
              replacement,
              { upsert: true },
            );
          } catch (error) {
            // The document exists with a position >= this one: the upsert's insert collided. Already applied.
            if (!isDuplicateKey(error)) throw error;
          }
        },
        remove: async (collection, id) => {
          await this.collection(collection).deleteOne({ _id: id, _position: { $lt: pos } });
        },
      };
    };

    await apply(writerAt);

    const update = { $set: { version, position: to.toString() } };
    if (from === -1n) {
      try {
        await this.checkpoints.updateOne({ _id: projection, position: '-1' }, update, { upsert: true });
        return true;
      } catch (error) {
        if (isDuplicateKey(error)) return false; // a checkpoint exists and is not -1
        throw error;
      }
    }
    const result = await this.checkpoints.updateOne({ _id: projection, position: from.toString() }, update);
    return result.matchedCount === 1;
  }

  /**
   * Each collection is rebuilt into `rm_<name>__rebuild` with one unordered `bulkWrite` per `write`,
   * then `commit` renames it over the live collection with `dropTarget` (a collection nothing was
   * written to is dropped) and sets the checkpoint last. A rename is atomic, so a reader of one
   * collection sees the old documents or the new, never a mix; a projection with several collections
   * switches them one after another, and the checkpoint moves only once all have switched.
   */
  async beginRebuild(projection: string, collections: readonly string[]): Promise<ReadModelRebuild> {
    const shadowOf = (collection: string) => `rm_${collection}__rebuild`;
    for (const collection of collections) await this.db.collection(shadowOf(collection)).drop().catch(ignoreNamespaceNotFound);
    const written = new Set<string>();
    let open = true;
    return {
      write: async (collection: string, docs: readonly RebuiltDocument[]) => {
        if (!open) throw new Error(`rebuild of ${projection} is over`);
        if (!collections.includes(collection)) throw new Error(`projection ${projection} does not own collection ${collection}`);
        if (docs.length === 0) return;
        written.add(collection);
        await this.db.collection<StoredDocument>(shadowOf(collection)).bulkWrite(
          docs.map(({ doc, position }) => ({ insertOne: { document: toStored(doc, position) } })),
          { ordered: false },
        );
      },
      commit: async (version: number, position: bigint) => {
        if (!open) throw new Error(`rebuild of ${projection} is over`);
        open = false;
        for (const collection of collections) {
          if (written.has(collection)) {
            // The shadow gets the declared indexes before it takes the live collection's place.
            const shadow = this.db.collection<StoredDocument>(shadowOf(collection));
            for (const { spec, name } of this.declaredIndexes(collection)) await shadow.createIndex(spec, { name });
            await this.db.renameCollection(shadowOf(collection), `rm_${collection}`, { dropTarget: true });
          } else await this.collection(collection).drop().catch(ignoreNamespaceNotFound);
        }
        await this.ensureIndexes(); // a dropped collection's declared indexes, for its next documents
        await this.checkpoints.updateOne({ _id: projection }, { $set: { version, position: position.toString() } }, { upsert: true });
      },
      abort: async () => {
        if (!open) return;
        open = false;
        for (const collection of collections) await this.db.collection(shadowOf(collection)).drop().catch(ignoreNamespaceNotFound);
      },
    };
  }

  async reset(projection: string, collections: readonly string[]): Promise<void> {
    for (const collection of collections) await this.collection(collection).deleteMany({});
    await this.checkpoints.deleteOne({ _id: projection });
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close();
  }
}

const indexName = (fields: readonly string[]) => `page__${fields.join('__')}`;
const lookupName = (fields: readonly string[]) => `lookup__${fields.join('__')}`;

export function encodePosition(position: bigint): string {
  if (position < 0n) throw new RangeError(`document position must be >= 0, got ${position}`);
  return position.toString().padStart(POSITION_WIDTH, '0');
}

function toStored(doc: Document, position: bigint): StoredDocument {
  // As `put` stores it: the document's own fields (its `id` included) under `_id`, with its position.
  const fields = JSON.parse(JSON.stringify(doc)) as Document;
  return { ...fields, _id: fields.id, _position: encodePosition(position) };
}

/** Dropping a collection that does not exist is not an error here. */
function ignoreNamespaceNotFound(error: unknown): void {
  if (error instanceof MongoServerError && (error.code === 26 || error.codeName === 'NamespaceNotFound')) return;
  throw error;
}

function toDocument(stored: StoredDocument): Document {
  const { _id, _position, ...fields } = stored;
  return { ...fields, id: _id };
}

function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 11000;
}
