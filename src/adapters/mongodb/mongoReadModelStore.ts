import { randomBytes } from 'node:crypto';
import { type ClientSession, MongoClient, MongoServerError, type Collection, type Db, type Filter as MongoFilter, type IndexSpecification, type Sort } from 'mongodb';
import { timeBound } from '../../lib/timeBound.ts';
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
import './unavailable.ts';

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
const PING_TIMEOUT_MS = 5_000;
/** A rebuild's shadow older than this is a leftover of a process that stopped mid-rebuild. */
const STALE_SHADOW_MS = 24 * 3_600_000;

/** The checkpoint was no longer `from` when the batch came to move it: its transaction is abandoned. */
class CheckpointMoved extends Error {}

/**
 * MongoDB read models: collection `x` is stored as `rm_x`, checkpoints in `checkpoints`.
 * A batch writes its documents and moves its checkpoint (compare-and-set) in one transaction, so a
 * batch that throws, or that lost the race for the checkpoint, writes nothing, as the port says
 * (MongoDB must be a replica set; one node is enough). Every document write is also guarded by the
 * writing event's position, so a replayed batch leaves the documents as a single run did.
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

  async get<T extends Document>(collection: string, id: string, session?: ClientSession): Promise<T | null> {
    const stored = await this.collection(collection).findOne({ _id: id }, session ? { session } : {});
    return stored ? (toDocument(stored) as T) : null;
  }

  async find<T extends Document>(collection: string, filter: Filter, options: { sortBy?: string; limit?: number } = {}, session?: ClientSession): Promise<T[]> {
    if (options.limit !== undefined && options.limit <= 0) return [];
    let cursor = this.collection(collection).find(filter as MongoFilter<StoredDocument>, session ? { session } : {});
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
    const read = (hinted: boolean) => {
      const cursor = coll.find({ $and: clauses }).sort(sort).limit(query.limit);
      return (index && hinted ? cursor.hint(indexName(index)) : cursor).toArray();
    };
    let stored: StoredDocument[];
    try {
      stored = await read(true);
    } catch (error) {
      // Another node of another version dropped the index (a rolling deploy): the planner chooses.
      if (!isMissingHintedIndex(error)) throw error;
      stored = await read(false);
    }
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
    const session = this.client.startSession();
    try {
      // MongoDB runs the callback again after a transient conflict: `apply` is a fold of the page over the writer, so that is safe.
      await session.withTransaction(async () => {
        await apply((position) => this.writerAt(position, session));
        if (!(await this.moveCheckpoint(projection, version, from, to, session))) throw new CheckpointMoved();
      });
      return true;
    } catch (error) {
      // A duplicate key here is the first checkpoint's upsert colliding with one another runner wrote.
      if (error instanceof CheckpointMoved || isDuplicateKey(error)) return false;
      throw error;
    } finally {
      await session.endSession();
    }
  }

  /** The writer for the event at `position`, inside the batch's transaction (reads see its own writes). */
  private writerAt(position: bigint, session: ClientSession): ProjectionWriter {
    const pos = encodePosition(position);
    return {
      get: (collection, id) => this.get(collection, id, session),
      find: (collection, filter) => this.find(collection, filter, {}, session),
      put: async (collection, doc) => {
        const coll = this.collection(collection);
        // Written by a later event already (a replayed batch): it stays. A write error would abort the transaction, so look first.
        const existing = await coll.findOne({ _id: doc.id }, { session, projection: { _position: 1 } });
        if (existing && typeof existing._position === 'string' && existing._position >= pos) return;
        await coll.replaceOne({ _id: doc.id }, { ...(JSON.parse(JSON.stringify(doc)) as Document), _position: pos }, { upsert: true, session });
      },
      remove: async (collection, id) => {
        await this.collection(collection).deleteOne({ _id: id, _position: { $lt: pos } }, { session });
      },
    };
  }

  /** Compare-and-set of the checkpoint from `from` to `to`; false when it is no longer `from`. */
  private async moveCheckpoint(projection: string, version: number, from: bigint, to: bigint, session: ClientSession): Promise<boolean> {
    const update = { $set: { version, position: to.toString() } };
    if (from === -1n) {
      // A checkpoint at another position makes this upsert's insert collide: a duplicate key, handled by the caller.
      await this.checkpoints.updateOne({ _id: projection, position: '-1' }, update, { upsert: true, session });
      return true;
    }
    const result = await this.checkpoints.updateOne({ _id: projection, position: from.toString() }, update, { session });
    return result.matchedCount === 1;
  }

  /**
   * Each collection is rebuilt into a shadow of its own, `rm_<name>__rebuild_<started>_<random>` (two
   * rebuilds at once, on two nodes, never share one), with one unordered `bulkWrite` per `write`,
   * then `commit` renames it over the live collection with `dropTarget` (a collection nothing was
   * written to is dropped) and sets the checkpoint last. A rename is atomic, so a reader of one
   * collection sees the old documents or the new, never a mix; a projection with several collections
   * switches them one after another, and the checkpoint moves only once all have switched.
   */
  async beginRebuild(projection: string, collections: readonly string[]): Promise<ReadModelRebuild> {
    const started = Date.now();
    const suffix = `${started}_${randomBytes(4).toString('hex')}`;
    const shadowOf = (collection: string) => `rm_${collection}__rebuild_${suffix}`;
    await this.dropStaleShadows(collections, started);
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

  /** Shadows a stopped process left behind (see isStaleShadow). */
  private async dropStaleShadows(collections: readonly string[], now: number): Promise<void> {
    for (const { name } of await this.db.listCollections({}, { nameOnly: true }).toArray()) {
      if (collections.some((collection) => isStaleShadow(name, collection, now))) await this.db.collection(name).drop().catch(ignoreNamespaceNotFound);
    }
  }

  async reset(projection: string, collections: readonly string[]): Promise<void> {
    for (const collection of collections) await this.collection(collection).deleteMany({});
    await this.checkpoints.deleteOne({ _id: projection });
  }

  async ping(): Promise<void> {
    // Without a bound the driver waits for server selection (30 s by default) and /readyz hangs.
    await timeBound(this.db.command({ ping: 1 }), PING_TIMEOUT_MS, `MongoDB did not answer within ${PING_TIMEOUT_MS} ms`);
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

/**
 * Whether `name` is a rebuild shadow of `collection` that no rebuild running now owns: a day old, or
 * the single shared name older builds used.
 */
export function isStaleShadow(name: string, collection: string, now: number): boolean {
  const prefix = `rm_${collection}__rebuild`;
  if (!name.startsWith(prefix)) return false;
  const rest = /^(?:_(\d+)_[0-9a-f]+)?$/.exec(name.slice(prefix.length));
  return rest !== null && (rest[1] === undefined || now - Number(rest[1]) > STALE_SHADOW_MS);
}

/** The page's hint names an index this collection does not have (yet, or any longer). */
function isMissingHintedIndex(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 2 && /hint/i.test(error.message);
}

function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 11000;
}
