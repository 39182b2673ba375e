import type Database from 'better-sqlite3';
import { openDatabase } from './openDatabase.ts';
import { OrderedIndex } from './orderedIndex.ts';
import type { Checkpoint, Document, Filter, IndexDeclarations, PageQuery, ProjectionBatch, ProjectionWriter, ReadModelRebuild, ReadModelStore, RebuiltDocument } from '../../ports/readModelStore.ts';
import { matches, sortDocuments } from '../shared/filter.ts';
import { assertDeclarations, assertPageNames, chooseIndex } from '../shared/pageShape.ts';

interface Entry {
  doc: Document;
  position: bigint;
}

/**
 * What one committed `applyBatch` changed, as written to the file: another thread's copy of the
 * store applies it with `applyCommitted` (projections in their own thread, src/projections/projectionThread.ts).
 */
export interface CommittedBatch {
  projection: string;
  version: number;
  to: bigint;
  /** [collection, id, document JSON or null for a removal, position]. */
  changes: Array<[string, string, string | null, bigint]>;
}

export interface SqliteReadModelStoreOptions {
  /** Called after each committed batch, with what it wrote. */
  onCommit?: (batch: CommittedBatch) => void;
  /** Called when the store reloaded everything from the file (another process moved a checkpoint). */
  onReload?: () => void;
}

/** A batch's staged writes per collection and id; null is a removal. */
type Overlay = Map<string, Map<string, Entry | null>>;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS documents (
  collection TEXT NOT NULL,
  id         TEXT NOT NULL,
  doc        TEXT NOT NULL,
  position   INTEGER NOT NULL,
  PRIMARY KEY (collection, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoints (
  name     TEXT PRIMARY KEY,
  version  INTEGER NOT NULL,
  position INTEGER NOT NULL
) WITHOUT ROWID;
-- How many rebuilds were switched in (and resets made): they write documents at the positions of old
-- events, which another connection's cache cannot find by position (see catchUp).
CREATE TABLE IF NOT EXISTS rebuilds (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  count INTEGER NOT NULL
);
`;

/**
 * Stored documents are deep-frozen: `get` and `find` hand out deep copies, a page hands out the
 * frozen documents themselves (read-only by the port's type; changing one throws), and a projection
 * gets a shallow copy whose nested values are frozen, so nothing changes stored state except a
 * guarded `put`, which freezes the document it is given.
 *
 * Embedded read models: every document lives in memory for fast queries and is persisted to a
 * SQLite file together with its projection's checkpoint in one transaction, so a restart resumes
 * exactly where the last committed batch ended. Read models can always be rebuilt from the events,
 * so this file uses synchronous=NORMAL.
 */
export class SqliteReadModelStore implements ReadModelStore {
  private readonly db: Database.Database;
  private collections = new Map<string, Map<string, Entry>>();
  private checkpoints = new Map<string, Checkpoint>();
  private readonly stmts;
  private readonly pageStatements = new Map<
    string,
    { sql: string; docs: Database.Statement<unknown[], { doc: string }>; keys: Database.Statement<unknown[], { id: string; position: bigint }> }
  >();
  /** collectionVersion: a stamp taken at each change, per collection, and at the last (re)load for all. */
  private stamp = 0;
  private loadedAt = 0;
  private readonly changedAt = new Map<string, number>();
  /** The declared indexes kept in memory over the cache, per collection and index name; built by the first page that walks one. */
  private readonly memoryIndexes = new Map<string, Map<string, OrderedIndex>>();
  /** `PRAGMA data_version` when the cache was last seen to hold the file's checkpoints (another connection's commit changes it). */
  private currentAt: bigint | null = null;
  /** The file's count of rebuilds switched in when the cache was last loaded (or switched one in itself). */
  private rebuilds = 0n;

  /** `indexes`: what each collection's pages walk (see IndexDeclarations); created here, once. */
  constructor(
    file: string,
    private readonly indexes: IndexDeclarations = {},
    private readonly options: SqliteReadModelStoreOptions = {},
  ) {
    this.db = openDatabase(file, 'NORMAL');
    this.db.exec(SCHEMA);
    this.ensureIndexes();
    this.db.defaultSafeIntegers(true);
    this.stmts = {
      allDocs: this.db.prepare<[], { collection: string; id: string; doc: string; position: bigint }>('SELECT * FROM documents'),
      allCheckpoints: this.db.prepare<[], { name: string; version: bigint; position: bigint }>('SELECT * FROM checkpoints'),
      docsAfter: this.db.prepare<[bigint], { collection: string; id: string; doc: string; position: bigint }>('SELECT * FROM documents WHERE position > ?'),
      collectionSizes: this.db.prepare<[], { collection: string; n: bigint }>('SELECT collection, count(*) AS n FROM documents GROUP BY collection'),
      collectionDocs: this.db.prepare<[string], { id: string; doc: string; position: bigint }>('SELECT id, doc, position FROM documents WHERE collection = ?'),
      checkpoint: this.db.prepare<[string], { version: bigint; position: bigint }>('SELECT version, position FROM checkpoints WHERE name = ?'),
      putDoc: this.db.prepare(
        'INSERT INTO documents (collection, id, doc, position) VALUES (?, ?, ?, ?) ON CONFLICT (collection, id) DO UPDATE SET doc = excluded.doc, position = excluded.position',
      ),
      deleteDoc: this.db.prepare('DELETE FROM documents WHERE collection = ? AND id = ?'),
      deleteCollection: this.db.prepare('DELETE FROM documents WHERE collection = ?'),
      putCheckpoint: this.db.prepare(
        'INSERT INTO checkpoints (name, version, position) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET version = excluded.version, position = excluded.position',
      ),
      deleteCheckpoint: this.db.prepare('DELETE FROM checkpoints WHERE name = ?'),
      dataVersion: this.db.prepare<[], bigint>('PRAGMA data_version').pluck(),
      rebuilds: this.db.prepare<[], bigint>('SELECT count FROM rebuilds').pluck(),
      countRebuild: this.db.prepare<[], bigint>('INSERT INTO rebuilds (id, count) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET count = count + 1 RETURNING count').pluck(),
    };
    this.load();
  }

  /** (Re)loads the cache from the file: at start, and when another process moved a checkpoint. */
  private load(): void {
    const collections = new Map<string, Map<string, Entry>>();
    const checkpoints = new Map<string, Checkpoint>();
    // One read transaction: documents and checkpoints from the same commit. Read apart, another
    // connection's commit in between would leave a checkpoint ahead of the documents it covers.
    this.db.transaction(() => {
      for (const row of this.stmts.allDocs.iterate()) {
        let coll = collections.get(row.collection);
        if (!coll) collections.set(row.collection, (coll = new Map()));
        coll.set(row.id, { doc: deepFreeze(JSON.parse(row.doc)), position: row.position });
      }
      for (const row of this.stmts.allCheckpoints.iterate()) {
        checkpoints.set(row.name, { version: Number(row.version), position: row.position });
      }
      this.rebuilds = this.storedRebuilds();
    })();
    this.collections = collections;
    this.checkpoints = checkpoints;
    this.memoryIndexes.clear();
    this.currentAt = null;
    this.loadedAt = ++this.stamp;
  }

  /**
   * Brings the cache up to what other connections committed without reading every document: a
   * document's position is that of the event that last wrote it, so what the cache lacks was written
   * after the lowest checkpoint it holds; those rows are read, then a collection whose size still
   * differs from the file's (a removal) is read again whole. A checkpoint that is new, gone or at
   * another version, or a rebuild switched in since (it rewrote documents at old positions, maybe
   * leaving every checkpoint where it was), reloads everything. One read transaction, as `load`.
   */
  private catchUp(): void {
    this.db.transaction(() => {
      if (this.storedRebuilds() !== this.rebuilds) return this.load();
      const stored = this.stmts.allCheckpoints.all();
      const sameProjections =
        stored.length === this.checkpoints.size && stored.every((row) => this.checkpoints.get(row.name)?.version === Number(row.version));
      if (!sameProjections || stored.length === 0) return this.load();
      let from = stored[0]!.position;
      for (const { position } of this.checkpoints.values()) if (position < from) from = position;
      for (const row of this.stmts.docsAfter.iterate(from)) {
        if (this.collections.get(row.collection)?.get(row.id)?.position === row.position) continue;
        this.setEntry(row.collection, row.id, { doc: deepFreeze(JSON.parse(row.doc)), position: row.position });
        this.changedAt.set(row.collection, ++this.stamp);
      }
      const sizes = new Map(this.stmts.collectionSizes.all().map((row) => [row.collection, Number(row.n)]));
      for (const collection of new Set([...this.collections.keys(), ...sizes.keys()])) {
        if ((this.collections.get(collection)?.size ?? 0) === (sizes.get(collection) ?? 0)) continue;
        const entries = new Map<string, Entry>();
        for (const row of this.stmts.collectionDocs.iterate(collection)) entries.set(row.id, { doc: deepFreeze(JSON.parse(row.doc)), position: row.position });
        this.collections.set(collection, entries);
        this.memoryIndexes.delete(collection);
        this.changedAt.set(collection, ++this.stamp);
      }
      this.checkpoints = new Map(stored.map((row) => [row.name, { version: Number(row.version), position: row.position }]));
      this.currentAt = null;
    })();
  }

  /**
   * Brings the documents and checkpoints to what the file holds (the thread that writes them found
   * it changed by another connection, or switched a rebuild in): what was committed since, or
   * everything after a rebuild (see `catchUp`).
   */
  reload(): void {
    this.catchUp();
  }

  private storedRebuilds(): bigint {
    return this.stmts.rebuilds.get() ?? 0n;
  }

  /**
   * Inside a write transaction: counts one more rebuild in the file. Returns what to run once it
   * committed: this cache holds what it wrote itself, so it takes the new count, unless it had missed
   * another connection's rebuild (then it still reloads at its next look).
   */
  private countRebuild(): () => void {
    const before = this.storedRebuilds();
    const after = this.stmts.countRebuild.get()!;
    return () => {
      if (before === this.rebuilds) this.rebuilds = after;
    };
  }

  /** The checkpoint the in-memory documents are at (not the file's, which another connection may have moved since). */
  heldCheckpoint(projection: string): Checkpoint | null {
    return this.checkpoints.get(projection) ?? null;
  }

  /**
   * Applies to the in-memory documents what another connection committed (`onCommit`'s batch); writes
   * nothing. A batch these documents already include (the file was loaded after it was committed) is
   * skipped: false.
   */
  applyCommitted(batch: CommittedBatch): boolean {
    const held = this.checkpoints.get(batch.projection);
    if (held && held.version === batch.version && held.position >= batch.to) return false;
    for (const [collection, id, json, position] of batch.changes) {
      this.setEntry(collection, id, json === null ? null : { doc: deepFreeze(JSON.parse(json)), position });
      this.changedAt.set(collection, ++this.stamp);
    }
    this.checkpoints.set(batch.projection, { version: batch.version, position: batch.to });
    return true;
  }

  collectionVersion(collection: string): number {
    return Math.max(this.changedAt.get(collection) ?? 0, this.loadedAt);
  }

  async get<T extends Document>(collection: string, id: string): Promise<T | null> {
    const entry = this.collections.get(collection)?.get(id);
    return entry ? (structuredClone(entry.doc) as T) : null;
  }

  async find<T extends Document>(collection: string, filter: Filter, options: { sortBy?: string; limit?: number } = {}): Promise<T[]> {
    const out: Document[] = [];
    for (const entry of this.collections.get(collection)?.values() ?? []) {
      if (matches(entry.doc, filter)) out.push(structuredClone(entry.doc));
    }
    return sortDocuments(out, options) as T[];
  }

  /**
   * A page walks the declared index `chooseIndex` picks, kept in memory over the cached documents
   * (see OrderedIndex), while the cache holds what the file holds: no other connection committed
   * since it was last seen to (`PRAGMA data_version`), or the file's checkpoints are the cache's.
   * Otherwise (another process or thread wrote and this cache has not caught up), or without a
   * declared index, the page is found with SQL in the file (committed state), walking the declared
   * partial expression index (INDEXED BY: the plan does not depend on statistics); its documents
   * come from the cache when it holds the same version (position) of each, parsed from the file
   * otherwise. Either way a deep page seeks its cursor like the first one instead of sorting the
   * collection. Documents come back as the cache holds them: frozen (read-only; see the port).
   */
  async page<T extends Document>(collection: string, query: PageQuery): Promise<Array<Readonly<T>>> {
    if (query.limit <= 0) return [];
    assertPageNames(collection, query);
    const index = chooseIndex(this.indexes, collection, query);
    if (index && this.cacheIsCurrent()) {
      const entries = this.memoryIndex(collection, index).walk(query);
      if (entries) return entries.map((entry) => entry.doc as T);
    }
    const { keys, docs, params } = this.pageStatement(collection, query);
    const cached = this.collections.get(collection);
    const out: Document[] = [];
    for (const row of keys.all(...params)) {
      const entry = cached?.get(row.id);
      if (!entry || entry.position !== row.position) return docs.all(...params).map((r) => JSON.parse(r.doc) as T);
      out.push(entry.doc);
    }
    return out as T[];
  }

  /** Whether the cache holds the file's committed documents; see `page`. */
  private cacheIsCurrent(): boolean {
    const version = this.stmts.dataVersion.get()!;
    if (version === this.currentAt) return true;
    const stored = this.stmts.allCheckpoints.all();
    const same =
      this.storedRebuilds() === this.rebuilds &&
      stored.length === this.checkpoints.size &&
      stored.every((row) => {
        const cached = this.checkpoints.get(row.name);
        return cached !== undefined && cached.position === row.position && cached.version === Number(row.version);
      });
    this.currentAt = same ? version : null;
    return same;
  }

  private memoryIndex(collection: string, fields: readonly string[]): OrderedIndex {
    let indexes = this.memoryIndexes.get(collection);
    if (!indexes) this.memoryIndexes.set(collection, (indexes = new Map()));
    const name = indexName(collection, fields);
    let index = indexes.get(name);
    if (!index) indexes.set(name, (index = new OrderedIndex(fields, this.collections.get(collection)?.values() ?? [])));
    return index;
  }

  /** Sets or removes one cached document, keeping the collection's in-memory indexes in step. */
  private setEntry(collection: string, id: string, entry: Entry | null): void {
    let coll = this.collections.get(collection);
    if (!coll) this.collections.set(collection, (coll = new Map()));
    const before = coll.get(id);
    if (entry) coll.set(id, entry);
    else coll.delete(id);
    for (const index of this.memoryIndexes.get(collection)?.values() ?? []) index.update(before, entry ?? undefined);
  }

  /** SQLite's plan of a page (EXPLAIN QUERY PLAN details), for tests of the declared indexes. */
  explainPage(collection: string, query: PageQuery): string[] {
    const { sql, params } = this.pageStatement(collection, query);
    return this.db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...params)
      .map((row) => row.detail);
  }

  private pageStatement(collection: string, query: PageQuery) {
    assertPageNames(collection, query);
    const desc = query.direction === 'desc';
    const rangeFields = Object.keys(query.ranges ?? {}).sort();
    const rangeOps = rangeFields.flatMap((f) => (['gt', 'lt'] as const).filter((op) => query.ranges![f]![op] !== undefined).map((op) => [f, op] as const));
    const filterFields = Object.keys(query.filter).sort();
    const shape = JSON.stringify([collection, filterFields.map((f) => [f, query.filter[f] === null]), rangeOps, query.orderBy, desc, Boolean(query.after)]);
    let cached = this.pageStatements.get(shape);
    if (!cached) {
      const index = chooseIndex(this.indexes, collection, query);
      const where = [`collection = '${collection}'`];
      for (const f of filterFields) where.push(query.filter[f] === null ? `${jsonField(f)} IS NULL` : `${jsonField(f)} = ?`);
      for (const [f, op] of rangeOps) where.push(`${jsonField(f)} ${op === 'gt' ? '>' : '<'} ?`);
      // Not a row value: SQLite seeks the index with `field <= ?` and filters only the ties by id.
      const [beyond, upTo] = desc ? ['<', '<='] : ['>', '>='];
      if (query.after) where.push(`${jsonField(query.orderBy)} ${upTo} ? AND (${jsonField(query.orderBy)} ${beyond} ? OR id ${beyond} ?)`);
      const dir = desc ? 'DESC' : 'ASC';
      const from = `FROM documents${index ? ` INDEXED BY "${indexName(collection, index)}"` : ''} WHERE ${where.join(' AND ')} ORDER BY ${jsonField(query.orderBy)} ${dir}, id ${dir} LIMIT ?`;
      const sql = `SELECT doc ${from}`;
      cached = {
        sql,
        docs: this.db.prepare<unknown[], { doc: string }>(sql),
        keys: this.db.prepare<unknown[], { id: string; position: bigint }>(`SELECT id, position ${from}`),
      };
      this.pageStatements.set(shape, cached);
    }
    const params: unknown[] = [];
    for (const f of filterFields) if (query.filter[f] !== null) params.push(sqlValue(query.filter[f]!));
    for (const [f, op] of rangeOps) params.push(query.ranges![f]![op]);
    if (query.after) params.push(query.after.value, query.after.value, query.after.id);
    params.push(query.limit);
    return { ...cached, params };
  }

  /** Creates the declared indexes and drops the page indexes of a declared collection that are no longer declared. */
  private ensureIndexes(): void {
    assertDeclarations(this.indexes);
    const existing = this.db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'documents' AND name LIKE 'rm\\_%' ESCAPE '\\'")
      .all()
      .map((row) => row.name);
    for (const [collection, list] of Object.entries(this.indexes)) {
      const declared = new Set(list.map((fields) => indexName(collection, fields)));
      for (const name of existing) if (name.startsWith(`rm_${collection}__`) && !declared.has(name)) this.db.exec(`DROP INDEX "${name}"`);
      for (const fields of list) {
        this.db.exec(`CREATE INDEX IF NOT EXISTS "${indexName(collection, fields)}" ON documents (${fields.map(jsonField).join(', ')}, id) WHERE collection = '${collection}'`);
      }
    }
  }

  async getCheckpoint(projection: string): Promise<Checkpoint | null> {
    const row = this.stmts.checkpoint.get(projection);
    const stored = row ? { version: Number(row.version), position: row.position } : null;
    const cached = this.checkpoints.get(projection) ?? null;
    if (stored?.position !== cached?.position || stored?.version !== cached?.version || this.storedRebuilds() !== this.rebuilds) {
      this.catchUp();
      this.options.onReload?.();
      // What was read: the file may have moved again since `stored` was read.
      return this.checkpoints.get(projection) ?? null;
    }
    return stored;
  }

  async applyBatch(
    projection: string,
    version: number,
    from: bigint,
    to: bigint,
    apply: (writer: (position: bigint) => ProjectionWriter) => Promise<void>,
  ): Promise<boolean> {
    const [applied] = await this.applyBatches([{ projection, version, from, to, apply }]);
    return applied!;
  }

  /**
   * Every batch staged in memory, then one transaction checks each checkpoint and writes the batches
   * that still apply. A batch whose `apply` throws is left out (nothing of it written, its checkpoint
   * unchanged) and the others are committed, as if each were applied alone; the first such error is
   * then thrown.
   */
  async applyBatches(batches: readonly ProjectionBatch[]): Promise<boolean[]> {
    // A rebuild switched in by another connection left checkpoints where they were: stage on what it wrote.
    if (this.storedRebuilds() !== this.rebuilds) {
      this.catchUp();
      this.options.onReload?.();
    }
    const staleAt = this.rebuilds;
    const overlays: Array<Overlay | null> = [];
    let failure: { error: unknown } | null = null;
    for (const batch of batches) {
      // A later batch sees the writes staged by the earlier ones, as if each had committed before it.
      const earlier = overlays.filter((o): o is Overlay => o !== null).reverse();
      try {
        overlays.push(await this.stage(batch.apply, earlier));
      } catch (error) {
        overlays.push(null);
        failure ??= { error };
      }
    }
    // What each committed batch wrote, for another thread's copy of this store (`onCommit`).
    const changes: Array<CommittedBatch['changes'] | null> = batches.map(() => (this.options.onCommit ? [] : null));
    const applied = this.db.transaction(() => {
      // One switched in while these were staged: they were staged on documents it replaced.
      const rebuilt = this.storedRebuilds() !== staleAt;
      return batches.map((batch, i) => {
        const overlay = overlays[i];
        if (!overlay || rebuilt) return false;
        const row = this.stmts.checkpoint.get(batch.projection);
        if ((row ? row.position : -1n) !== batch.from) return false;
        const written = changes[i];
        for (const [collection, entries] of overlay) {
          for (const [id, entry] of entries) {
            if (entry) {
              const json = JSON.stringify(entry.doc);
              this.stmts.putDoc.run(collection, id, json, entry.position);
              written?.push([collection, id, json, entry.position]);
            } else {
              this.stmts.deleteDoc.run(collection, id);
              written?.push([collection, id, null, batch.to]);
            }
          }
        }
        this.stmts.putCheckpoint.run(batch.projection, batch.version, batch.to);
        return true;
      });
    }).immediate();

    if (applied.some((ok, i) => !ok && overlays[i])) {
      // Another connection moved a checkpoint: take in what it committed.
      this.catchUp();
      this.options.onReload?.();
    }
    batches.forEach((batch, i) => {
      if (!applied[i]) return;
      for (const [collection, entries] of overlays[i]!) {
        this.changedAt.set(collection, ++this.stamp);
        // Many changes at once (a bulk load): the collection's in-memory indexes are built again when next walked.
        if (entries.size > REINDEX_AFTER) this.memoryIndexes.delete(collection);
        for (const [id, entry] of entries) this.setEntry(collection, id, entry);
      }
      this.checkpoints.set(batch.projection, { version: batch.version, position: batch.to });
      const written = changes[i];
      if (written) this.options.onCommit!({ projection: batch.projection, version: batch.version, to: batch.to, changes: written });
    });
    if (failure) throw failure.error;
    return applied;
  }

  /** Runs a batch's writes against an overlay of the cache; nothing is stored yet. */
  private async stage(apply: ProjectionBatch['apply'], earlier: readonly Overlay[]): Promise<Overlay> {
    const overlay: Overlay = new Map();
    const layers = [overlay, ...earlier];
    const current = (collection: string, id: string): Entry | null | undefined => {
      for (const layer of layers) {
        const staged = layer.get(collection)?.get(id);
        if (staged !== undefined) return staged;
      }
      return this.collections.get(collection)?.get(id);
    };
    const stage = (collection: string, id: string, entry: Entry | null) => {
      let coll = overlay.get(collection);
      if (!coll) overlay.set(collection, (coll = new Map()));
      coll.set(id, entry);
    };
    // One writer for the whole batch: events are applied one after another, so it only needs the
    // position of the event being applied.
    let position = -1n;
    const writer: ProjectionWriter = {
      get: async <T extends Document>(collection: string, id: string) => {
        const entry = current(collection, id);
        return entry ? ({ ...entry.doc } as T) : null;
      },
      find: async <T extends Document>(collection: string, filter: Filter) => {
        const seen = new Set<string>();
        const out: Document[] = [];
        for (const layer of layers) {
          for (const [id, entry] of layer.get(collection) ?? []) {
            if (seen.has(id)) continue;
            seen.add(id);
            if (entry && matches(entry.doc, filter)) out.push({ ...entry.doc });
          }
        }
        for (const [id, entry] of this.collections.get(collection) ?? []) {
          if (!seen.has(id) && matches(entry.doc, filter)) out.push({ ...entry.doc });
        }
        return out as T[];
      },
      put: async (collection, doc) => {
        const existing = current(collection, doc.id);
        if (existing && existing.position >= position) return;
        stage(collection, doc.id, { doc: deepFreeze(doc), position });
      },
      remove: async (collection, id) => {
        const existing = current(collection, id);
        if (!existing || existing.position >= position) return;
        stage(collection, id, null);
      },
    };
    await apply((at) => {
      position = at;
      return writer;
    });
    return overlay;
  }

  /**
   * The shadow is a temporary table of this connection (`temp.rebuild_<projection>`, same shape as
   * `documents`): filling it, one transaction per `write`, takes no lock on the file and writes no
   * WAL. `commit` is one transaction that deletes the live documents of the projection's
   * collections, copies the shadow rows in, and sets the checkpoint; the in-memory cache then swaps
   * the collections in one synchronous step. So a reader of the file or of this process sees the old
   * documents or the new, never a mix, and the file's write lock is held only for the copy. A crash
   * before the commit leaves nothing behind (temporary tables go with the connection).
   */
  async beginRebuild(projection: string, collections: readonly string[]): Promise<ReadModelRebuild> {
    const shadow = `temp."rebuild_${projection.replace(/[^A-Za-z0-9_]/g, '_')}"`;
    this.db.exec(`DROP TABLE IF EXISTS ${shadow}`);
    this.db.exec(`CREATE TABLE ${shadow} (collection TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID`);
    const insert = this.db.prepare(`INSERT OR REPLACE INTO ${shadow} (collection, id, doc, position) VALUES (?, ?, ?, ?)`);
    const owned = new Set(collections);
    const staged = new Map<string, Map<string, Entry>>(collections.map((c) => [c, new Map()]));
    let open = true;
    const writeRows = this.db.transaction((collection: string, docs: readonly RebuiltDocument[]) => {
      for (const { doc, position } of docs) insert.run(collection, doc.id, JSON.stringify(doc), position);
    });
    return {
      write: async (collection, docs) => {
        if (!open) throw new Error(`rebuild of ${projection} is over`);
        if (!owned.has(collection)) throw new Error(`projection ${projection} does not own collection ${collection}`);
        writeRows(collection, docs);
        const into = staged.get(collection)!;
        for (const { doc, position } of docs) into.set(doc.id, { doc: deepFreeze(doc), position });
      },
      commit: async (version, position) => {
        if (!open) throw new Error(`rebuild of ${projection} is over`);
        open = false;
        const adoptCount = this.db.transaction(() => {
          for (const collection of collections) this.stmts.deleteCollection.run(collection);
          this.db.exec(`INSERT INTO documents (collection, id, doc, position) SELECT collection, id, doc, position FROM ${shadow}`);
          this.stmts.putCheckpoint.run(projection, version, position);
          this.db.exec(`DROP TABLE ${shadow}`);
          return this.countRebuild();
        }).immediate();
        adoptCount();
        for (const [collection, entries] of staged) {
          if (entries.size > 0) this.collections.set(collection, entries);
          else this.collections.delete(collection);
          this.memoryIndexes.delete(collection);
          this.changedAt.set(collection, ++this.stamp);
        }
        this.checkpoints.set(projection, { version, position });
        // Another thread's copy of this store reads the switched collections anew.
        this.options.onReload?.();
      },
      abort: async () => {
        if (!open) return;
        open = false;
        this.db.exec(`DROP TABLE IF EXISTS ${shadow}`);
      },
    };
  }

  async reset(projection: string, collections: readonly string[]): Promise<void> {
    // Counted as a rebuild: what is folded again is written at the positions of old events.
    const adoptCount = this.db.transaction(() => {
      for (const collection of collections) this.stmts.deleteCollection.run(collection);
      this.stmts.deleteCheckpoint.run(projection);
      return this.countRebuild();
    }).immediate();
    adoptCount();
    for (const collection of collections) {
      this.collections.delete(collection);
      this.memoryIndexes.delete(collection);
      this.changedAt.set(collection, ++this.stamp);
    }
    this.checkpoints.delete(projection);
  }

  async ping(): Promise<void> {
    this.stmts.checkpoint.get('');
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

/** The SQL expression of a top-level document field (names are checked by `assertPageNames` / `assertDeclarations`). */
const jsonField = (field: string) => `json_extract(doc, '$.${field}')`;

const indexName = (collection: string, fields: readonly string[]) => `rm_${collection}__${fields.join('__')}`;

/** A batch changing more documents of a collection than this drops its in-memory indexes instead of updating them one by one. */
const REINDEX_AFTER = 1_000;

/** JSON booleans read back as 1 / 0 through json_extract. */
const sqlValue = (value: string | number | boolean) => (typeof value === 'boolean' ? (value ? 1 : 0) : value);

/** Freezes a document and everything in it; returns it. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
