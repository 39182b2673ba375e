import Database from 'better-sqlite3';
import { BUSY_TIMEOUT_MS, isBusy, openDatabase } from './openDatabase.ts';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { EventEmitter } from 'node:events';
import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  WrongExpectedRevisionError,
} from '../../ports/eventStore.ts';
import { catchUpSubscription } from '../shared/catchUpSubscription.ts';
import { sleep } from '../../lib/sleep.ts';
import { type AppendOp, type OpResult, type WriteOp, createCommitter } from './appendWriter.js';

interface Row {
  position: bigint;
  id: string;
  stream_id: string;
  revision: bigint;
  type: string;
  data: string;
  metadata: string;
  created_at: bigint;
}

interface PendingOp {
  op: WriteOp;
  /** Never committed on the calling thread (a background role's append: its fsync must not block the loop). */
  offThread?: boolean;
  resolve: (result: AppendResult | null) => void;
  reject: (error: unknown) => void;
}

type WriterMessage = { kind: 'committed'; id: number; results: OpResult[] };

/** The event log's tables (the benchmark's raw baseline uses the same shape). */
export const EVENTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position   INTEGER PRIMARY KEY AUTOINCREMENT,
  id         TEXT    NOT NULL UNIQUE,
  stream_id  TEXT    NOT NULL,
  revision   INTEGER NOT NULL,
  type       TEXT    NOT NULL,
  data       TEXT    NOT NULL,
  metadata   TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (stream_id, revision)
);
CREATE TABLE IF NOT EXISTS streams (
  stream_id TEXT PRIMARY KEY,
  revision  INTEGER NOT NULL
) WITHOUT ROWID;
`;

/**
 * Marks: for each name, the position of the last event of the listed types. Kept by a trigger in the
 * database file, so every connection that appends (another process, one opened without `marks`, the
 * writer thread) keeps it, in the append's own transaction.
 */
const MARKS_SCHEMA = `
CREATE TABLE IF NOT EXISTS event_marks (
  name     TEXT    PRIMARY KEY,
  position INTEGER NOT NULL,
  types    TEXT    NOT NULL
) WITHOUT ROWID;
`;

/**
 * `PRAGMA temp_store = MEMORY` on every connection that writes the event log (this store's and the
 * writer thread's, appendWriter.js). The marks' triggers on `events` make every insert keep a
 * statement journal, and by default one past 64 KiB (a group commit of a few ingestions) goes to a
 * temporary file: every such commit created one, wrote it (about 140 `pwrite`s for four
 * ingestions) and deleted it, about a third of the writer's CPU per ingestion. Only a rollback
 * inside a live transaction reads it, so durability does not depend on where it is. Other files
 * keep the default, so large sorts (an index built at start) may still spill to disk.
 */
export const EVENT_LOG_TEMP_STORE = 'MEMORY';

/**
 * The trigger that keeps a mark. The types are matched as `,Type,` in one string: `NEW.type IN (…)`
 * cost about 3 µs per inserted event (SQLite builds the list's lookup table on every run of the
 * trigger), paid by every append, and almost no event is of a marked type.
 */
function markTrigger(trigger: string, name: string, types: readonly string[]): string {
  const list = `,${[...types].sort().join(',')},`;
  return `CREATE TRIGGER ${trigger} AFTER INSERT ON events WHEN instr('${list}', ',' || NEW.type || ',') > 0 AND instr(NEW.type, ',') = 0 BEGIN UPDATE event_marks SET position = NEW.position WHERE name = '${name}'; END`;
}

/**
 * Embedded event store on one SQLite file (WAL, synchronous=FULL: a resolved append is on disk).
 * Reads run on this thread. A lone append while nothing else is being written commits right here
 * (no hand-off cost); appends that arrive together, or while a commit is under way, go to the
 * writer thread (appendWriter.js), which commits each group in one transaction (group commit) so
 * the fsync of busy periods never blocks the event loop.
 *
 * One writer per process: the other threads of the process that append to the same file (the
 * background roles' thread of `npm start`) are given a port to this store's writer thread
 * (`shareWriter`, option `writer`). Their appends then join its group commits instead of taking
 * the file's write lock from a connection of their own: SQLite makes a connection that finds the
 * lock taken sleep and try again (1, 2, 5 … up to 100 ms a try), which under load held appends for
 * tens of milliseconds and blocked the event loop of a thread committing on its own connection.
 */
export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly appended = new EventEmitter();
  private queue: PendingOp[] = [];
  private flushScheduled = false;
  private readonly stmts;
  private readonly pollIntervalMs: number;
  private writer: Worker | MessagePort | null = null;
  /** A port to another store's writer thread (option `writer`), until that thread closes it. */
  private sharedWriter: MessagePort | null;
  /** This store's writer also commits for other threads (`shareWriter`): appends never commit on this thread. */
  private sharing = false;
  /** Given another store's writer: appends never commit on this thread, even through a writer of its own after that one closed. */
  private readonly wasGivenWriter: boolean;
  private readonly readOnly: boolean;
  private nextBatchId = 1;
  /** Batches handed to a writer and not yet answered, with the writer each went to. */
  private readonly inFlight = new Map<number, { batch: PendingOp[]; via: Worker | MessagePort }>();
  /** Set when this store's own writer thread ended while it was shared: the next one is announced (`onWriterRestart`). */
  private writerEnded = false;
  private readonly restartListeners = new Set<() => void>();
  /** Earlier shared ports still waiting for answers, closed once they have them. */
  private readonly retiring = new Set<MessagePort>();
  /** The exits of own writer threads told to end (`adoptWriter`); `close` waits for them. */
  private readonly retired = new Set<Promise<void>>();
  private readonly commitHere: (ops: WriteOp[]) => OpResult[];

  constructor(
    private readonly file: string,
    options: {
      pollIntervalMs?: number;
      marks?: Readonly<Record<string, readonly string[]>>;
      /** A port from `shareWriter` of the store of this process's main thread: appends are committed by its writer thread. */
      writer?: MessagePort;
      /**
       * Reads only (the auditor's commands on a DATA_DIR they may not write to): the file must exist,
       * nothing in it is created or changed, and an append is refused.
       */
      readOnly?: boolean;
    } = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 200;
    this.sharedWriter = options.writer ?? null;
    this.wasGivenWriter = options.writer !== undefined;
    this.readOnly = options.readOnly === true;
    if (options.writer) this.listenTo(options.writer);
    let marksKept = true;
    if (this.readOnly) {
      this.db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        // The first read finds out whether a WAL-mode file can be read here (see openEventLogToRead).
        marksKept = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'event_marks'").get() !== undefined;
      } catch (error) {
        this.db.close();
        throw error;
      }
    } else {
      this.db = openDatabase(file, 'FULL');
      this.db.pragma(`temp_store = ${EVENT_LOG_TEMP_STORE}`);
      this.db.exec(EVENTS_SCHEMA);
      this.db.exec(MARKS_SCHEMA);
    }
    this.db.defaultSafeIntegers(true);
    if (options.marks && !this.readOnly) this.installMarks(options.marks);
    this.appended.setMaxListeners(0);
    this.stmts = {
      readStream: this.db.prepare<[string], Row>('SELECT * FROM events WHERE stream_id = ? ORDER BY revision'),
      readStreamFrom: this.db.prepare<[string, bigint], Row>('SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision'),
      readAll: this.db.prepare<[bigint, number], Row>('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      readAllOfTypes: this.db.prepare<[bigint, string, number], Row>(
        'SELECT * FROM events WHERE position > ? AND type IN (SELECT value FROM json_each(?)) ORDER BY position LIMIT ?',
      ),
      head: this.db.prepare<[], { p: bigint | null }>('SELECT MAX(position) AS p FROM events'),
      // Plucked: a bare value, no row object (read before every authenticated request).
      // None in a log written before marks, read only (their table is created when the service opens it).
      mark: marksKept ? this.db.prepare<[string], bigint>('SELECT position FROM event_marks WHERE name = ?').pluck() : null,
      streamLast: this.db.prepare<[string], { position: bigint }>('SELECT position FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1'),
    };
    const commit = createCommitter(this.db);
    const busyTimeout = (ms: number) => this.db.prepare(`PRAGMA busy_timeout = ${ms}`);
    const noWait = busyTimeout(0);
    const wait = busyTimeout(BUSY_TIMEOUT_MS);
    // Never waits for the lock: another connection (another process) holding it would put SQLite's
    // busy wait, up to BUSY_TIMEOUT_MS of sleeps, on this thread's event loop.
    this.commitHere = (ops) => {
      noWait.get();
      try {
        return commit(ops);
      } finally {
        wait.get();
      }
    };
  }

  /**
   * Installs (or, when its list of types changed, replaces) each mark's trigger. A new mark starts at
   * the head: the events already written may include its types, and the head is not before any of them.
   */
  private installMarks(marks: Readonly<Record<string, readonly string[]>>): void {
    const install = this.db.transaction(() => {
      for (const [name, types] of Object.entries(marks)) {
        if (!/^[a-z][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid event mark name: ${name}`);
        for (const type of types) if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(type)) throw new Error(`invalid event type for mark ${name}: ${type}`);
        const listed = JSON.stringify([...types].sort());
        const trigger = `event_mark_${name}`;
        const sql = types.length > 0 ? markTrigger(trigger, name, types) : null;
        const sameTypes = this.db.prepare<[string], { types: string }>('SELECT types FROM event_marks WHERE name = ?').get(name)?.types === listed;
        const installed = this.db.prepare<[string], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?").get(trigger);
        // Replaced too when it was written in an earlier form (a file created by an older version).
        if (sameTypes && (installed?.sql ?? null) === sql) continue;
        this.db.exec(`DROP TRIGGER IF EXISTS ${trigger}`);
        if (sql) this.db.exec(sql);
        // Same types and a trigger of another form kept the mark: it is right as it is (no append
        // can run inside this IMMEDIATE transaction). Without a trigger it may be behind: the head.
        if (sameTypes && installed) continue;
        this.db
          .prepare(
            `INSERT INTO event_marks (name, position, types) VALUES (?, (SELECT COALESCE(MAX(position), -1) FROM events), ?)
             ON CONFLICT (name) DO UPDATE SET position = MAX(event_marks.position, excluded.position), types = excluded.types`,
          )
          .run(name, listed);
      }
    });
    install.immediate();
  }

  /** Position of the last event of the mark's types (-1n when none), or null when no such mark is kept in this file. */
  async markPosition(mark: string): Promise<bigint | null> {
    return this.stmts.mark?.get(mark) ?? null;
  }

  append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    return this.appendVia(streamId, events, expectedRevision, false);
  }

  /**
   * This store with every append committed on the writer thread, for background roles (the webhook
   * worker, the agents): their appends come one at a time, and committing each here would put its
   * fsync on their event loop, which the API's requests share. Same guarantees: an append resolves
   * once durable, and its expected revision is checked in the writer's transaction.
   */
  offThreadAppends(): EventStore {
    return new OffThreadAppends(this, (streamId, events, expected) => this.appendVia(streamId, events, expected, true));
  }

  private appendVia(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision, offThread: boolean): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      const now = BigInt(Date.now());
      const rows = events.map((e): [string, string, string] => [e.type, JSON.stringify(e.data), JSON.stringify(e.metadata ?? {})]);
      this.enqueue({
        offThread,
        op: { kind: 'append', streamId, expected: expectedRevision, events: rows, now },
        resolve: (result) => resolve(result as AppendResult),
        reject,
      });
    });
  }

  /** Deletes the stream's events and revision, in order after the appends already issued. */
  deleteStream(streamId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.enqueue({ op: { kind: 'delete', streamId }, resolve: () => resolve(), reject });
    });
  }

  private enqueue(pending: PendingOp): void {
    if (this.readOnly) return pending.reject(new Error(`the event log ${this.file} is open for reading only`));
    this.queue.push(pending);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      // After the I/O callbacks of this loop turn: the appends of requests read together travel
      // together (a queued microtask would send each request's append alone).
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    if (batch.length === 1 && this.inFlight.size === 0 && !batch[0]!.offThread && !this.sharing && !this.wasGivenWriter) {
      // The writer thread is idle (it holds no lock), and handing one append over would only add
      // two thread hops to its latency. If another process holds the lock, the writer thread waits for it.
      const results = this.commitHere([batch[0]!.op]);
      const [result] = results;
      if (!(result && 'error' in result && isBusy(result.error))) {
        this.settle(batch, results);
        return;
      }
    }
    const id = this.nextBatchId++;
    const writer = this.startWriter();
    this.inFlight.set(id, { batch, via: writer });
    writer.ref();
    writer.postMessage({ kind: 'ops', id, ops: batch.map((p) => p.op) });
  }

  private settle(batch: PendingOp[], results: OpResult[]): void {
    batch.forEach((pending, i) => {
      const result = results[i]!;
      if ('ok' in result) pending.resolve(result.ok);
      else if ('conflict' in result) {
        const op = pending.op as AppendOp;
        pending.reject(new WrongExpectedRevisionError(op.streamId, op.expected, result.conflict));
      } else pending.reject(Object.assign(new Error(result.error.message), { code: result.error.code }));
    });
    this.appended.emit('append');
  }

  /**
   * A port to this store's writer thread for another thread of this process (pass it as that
   * thread's store's `writer` option). From now on this store commits every append on the writer
   * thread too: committing one here could wait for the lock the writer holds for another thread.
   * If the writer thread ends, the port closes and the other store starts a writer of its own;
   * when this store starts its next writer, `onWriterRestart` listeners can hand out new ports.
   */
  shareWriter(): MessagePort {
    const writer = this.startWriter();
    if (!(writer instanceof Worker)) throw new Error('this store appends through another store\'s writer');
    const { port1, port2 } = new MessageChannel();
    writer.postMessage({ kind: 'port', port: port2 }, [port2]);
    this.sharing = true;
    return port1;
  }

  /** Called when this store starts a new writer thread after the one it shared ended (give the other threads a port to it again). */
  onWriterRestart(listener: () => void): () => void {
    this.restartListeners.add(listener);
    return () => this.restartListeners.delete(listener);
  }

  /**
   * Appends through `port` (from the owner's `shareWriter`) from now on: the owner's writer thread
   * was replaced. A writer of this store's own, started when the old port closed, answers what it
   * has in flight and ends.
   */
  adoptWriter(port: MessagePort): void {
    const previous = this.writer;
    const previousShared = this.sharedWriter;
    this.sharedWriter = port;
    this.listenTo(port);
    this.writer = port;
    if (previousShared && previousShared !== port) this.retire(previousShared);
    if (previous instanceof Worker) {
      // It answers what it has in flight first (it handles messages in order), then ends.
      this.retired.add(new Promise<void>((resolve) => previous.once('exit', () => resolve())));
      previous.postMessage({ kind: 'close' });
    }
  }

  /** Lets go of an earlier shared port once it has answered every batch sent through it (closing it sooner would lose their answers). */
  private retire(port: MessagePort): void {
    if (this.waitsFor(port)) this.retiring.add(port);
    else port.close();
  }

  /**
   * Listens to a shared writer's port from the start: a port tells of its closing only the
   * listeners it has when it closes, and a store that has not appended yet must learn of it too.
   */
  private listenTo(shared: MessagePort): void {
    shared.on('message', (message: WriterMessage) => this.committed(shared, message));
    shared.once('close', () => {
      // The writer thread ended: what it had not answered is not known to be committed, and the
      // next append starts a writer of this store's own.
      if (this.sharedWriter === shared) this.sharedWriter = null;
      this.failInFlight(shared, new Error('the event store writer thread closed'));
    });
    shared.unref();
  }

  private startWriter(): Worker | MessagePort {
    if (this.writer) return this.writer;
    if (this.sharedWriter) return (this.writer = this.sharedWriter);
    const writer = new Worker(new URL('./appendWriter.js', import.meta.url), { workerData: { file: this.file, role: 'sqlite-append-writer' } });
    writer.on('message', (message: WriterMessage) => this.committed(writer, message));
    const fail = (error: unknown) => {
      // The writer died: nothing in flight with it is known to be committed, so those writes fail
      // (the caller sees an error, never a false success) and the next write starts a new writer.
      if (this.writer === writer && this.sharing) this.writerEnded = true;
      this.failInFlight(writer, error);
    };
    writer.on('error', fail);
    writer.on('exit', (code) => fail(new Error(`event store writer exited with code ${code}`)));
    writer.unref();
    this.writer = writer;
    if (this.writerEnded) {
      this.writerEnded = false;
      queueMicrotask(() => {
        for (const listener of this.restartListeners) listener();
      });
    }
    return writer;
  }

  private committed(writer: Worker | MessagePort, message: WriterMessage): void {
    if (message.kind !== 'committed') return;
    const entry = this.inFlight.get(message.id);
    this.inFlight.delete(message.id);
    if (!this.waitsFor(writer)) {
      writer.unref();
      if (this.retiring.delete(writer as MessagePort)) (writer as MessagePort).close();
    }
    if (entry) this.settle(entry.batch, message.results);
  }

  private waitsFor(writer: Worker | MessagePort): boolean {
    for (const entry of this.inFlight.values()) if (entry.via === writer) return true;
    return false;
  }

  /** `via` ended: what it had not answered fails, and the next write goes to another writer. */
  private failInFlight(via: Worker | MessagePort, error: unknown): void {
    if (this.writer === via) this.writer = null;
    for (const [id, entry] of this.inFlight) {
      if (entry.via !== via) continue;
      this.inFlight.delete(id);
      for (const pending of entry.batch) pending.reject(error);
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const rows = options.fromRevision === undefined ? this.stmts.readStream.all(streamId) : this.stmts.readStreamFrom.all(streamId, options.fromRevision);
    return rows.map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const after = options.after ?? -1n;
    const limit = options.limit ?? 1000;
    if (options.types) return this.stmts.readAllOfTypes.all(after, JSON.stringify(options.types), limit).map(toRecorded);
    return this.stmts.readAll.all(after, limit).map(toRecorded);
  }

  subscribeToAll(options: SubscribeOptions = {}): AsyncIterable<RecordedEvent> {
    return catchUpSubscription(this, options);
  }

  /** Wakes on an append from this process at once, and notices other processes' appends by polling. */
  async waitForNew(after: bigint, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!signal?.aborted && Date.now() < deadline) {
      if ((await this.headPosition()) > after) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.appended.off('append', done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(this.pollIntervalMs, Math.max(0, deadline - Date.now())));
        this.appended.on('append', done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Calls `listener` after each group of this store's appends is committed; returns the unsubscribe function. */
  onAppend(listener: () => void): () => void {
    this.appended.on('append', listener);
    return () => this.appended.off('append', listener);
  }

  /** Wakes this store's `waitForNew` callers: another thread of the process appended (its events are committed). */
  noticeAppend(): void {
    this.appended.emit('append');
  }

  async streamLastPosition(streamId: string): Promise<bigint | null> {
    return this.stmts.streamLast.get(streamId)?.position ?? null;
  }

  async headPosition(): Promise<bigint> {
    return this.stmts.head.get()?.p ?? -1n;
  }

  async ping(): Promise<void> {
    this.stmts.head.get();
  }

  async close(): Promise<void> {
    while (this.queue.length > 0 || this.flushScheduled || this.inFlight.size > 0) await sleep(1);
    const writer = this.writer;
    this.writer = null;
    if (this.sharedWriter) {
      // Another store's writer: this thread only lets go of its port.
      this.sharedWriter.close();
      this.sharedWriter = null;
    } else if (writer instanceof Worker) {
      const closed = new Promise<void>((resolve) => writer.once('exit', () => resolve()));
      writer.ref();
      writer.postMessage({ kind: 'close' });
      await closed;
    }
    for (const port of this.retiring) port.close();
    this.retiring.clear();
    await Promise.all(this.retired);
    this.db.close();
  }

}

/** A view of a SqliteEventStore whose appends go to the writer thread; everything else is the store's own. */
class OffThreadAppends implements EventStore {
  constructor(
    private readonly store: SqliteEventStore,
    readonly append: EventStore['append'],
  ) {}
  readStream(streamId: string, options?: ReadStreamOptions) {
    return this.store.readStream(streamId, options);
  }
  readAll(options?: ReadAllOptions) {
    return this.store.readAll(options);
  }
  subscribeToAll(options?: SubscribeOptions) {
    return this.store.subscribeToAll(options);
  }
  waitForNew(after: bigint, timeoutMs: number, signal?: AbortSignal) {
    return this.store.waitForNew(after, timeoutMs, signal);
  }
  headPosition() {
    return this.store.headPosition();
  }
  deleteStream(streamId: string) {
    return this.store.deleteStream(streamId);
  }
  streamLastPosition(streamId: string) {
    return this.store.streamLastPosition(streamId);
  }
  markPosition(mark: string) {
    return this.store.markPosition(mark);
  }
  offThreadAppends(): EventStore {
    return this;
  }
  ping() {
    return this.store.ping();
  }
  /** The store belongs to whoever opened it. */
  async close(): Promise<void> {}
}

function toRecorded(row: Row): RecordedEvent {
  return {
    id: row.id,
    streamId: row.stream_id,
    revision: row.revision,
    position: row.position,
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
    createdAt: new Date(Number(row.created_at)),
  };
}
