import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  RecordedEvent,
  SubscribeOptions,
} from '../../ports/eventStore.ts';
import { catchUpSubscription, sleep } from '../../ports/catchUpSubscription.ts';
import { checkExpectedRevision } from '../../ports/expectedRevision.ts';

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

interface PendingAppend {
  streamId: string;
  events: NewEvent[];
  expected: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

const SCHEMA = `
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
 * Embedded event store on one SQLite file (WAL, synchronous=FULL: a resolved append is on disk).
 * Appends issued in the same tick are group-committed in one transaction, each inside its own
 * savepoint so one append's conflict does not fail the others.
 */
export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly appended = new EventEmitter();
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private readonly stmts;
  private readonly commitBatch: Database.Transaction<(batch: PendingAppend[]) => Array<AppendResult | { error: unknown }>>;

  constructor(file: string, options: { pollIntervalMs?: number } = {}) {
    this.pollIntervalMs = options.pollIntervalMs ?? 200;
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 10000');
    this.db.exec(SCHEMA);
    this.db.defaultSafeIntegers(true);
    this.appended.setMaxListeners(0);
    this.stmts = {
      streamRevision: this.db.prepare<[string], { revision: bigint }>('SELECT revision FROM streams WHERE stream_id = ?'),
      upsertStream: this.db.prepare(
        'INSERT INTO streams (stream_id, revision) VALUES (?, ?) ON CONFLICT (stream_id) DO UPDATE SET revision = excluded.revision',
      ),
      insert: this.db.prepare(
        'INSERT INTO events (id, stream_id, revision, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      readStream: this.db.prepare<[string], Row>('SELECT * FROM events WHERE stream_id = ? ORDER BY revision'),
      readAll: this.db.prepare<[bigint, number], Row>('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      head: this.db.prepare<[], { p: bigint | null }>('SELECT MAX(position) AS p FROM events'),
      deleteEvents: this.db.prepare('DELETE FROM events WHERE stream_id = ?'),
      deleteStream: this.db.prepare('DELETE FROM streams WHERE stream_id = ?'),
    };
    const appendOne = this.db.transaction((item: PendingAppend): AppendResult => {
      const row = this.stmts.streamRevision.get(item.streamId);
      const current = row ? row.revision : ('no_stream' as const);
      checkExpectedRevision(item.streamId, item.expected, current);
      let revision = current === 'no_stream' ? -1n : current;
      let position = -1n;
      const now = Date.now();
      for (const event of item.events) {
        revision += 1n;
        const info = this.stmts.insert.run(
          randomUUID(),
          item.streamId,
          revision,
          event.type,
          JSON.stringify(event.data),
          JSON.stringify(event.metadata ?? {}),
          now,
        );
        position = BigInt(info.lastInsertRowid);
      }
      if (item.events.length > 0) this.stmts.upsertStream.run(item.streamId, revision);
      return { nextExpectedRevision: revision, position };
    });
    this.commitBatch = this.db.transaction((batch: PendingAppend[]) =>
      batch.map((item) => {
        try {
          return appendOne(item);
        } catch (error) {
          return { error };
        }
      }),
    );
  }

  private readonly pollIntervalMs: number;

  append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ streamId, events, expected: expectedRevision, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    this.flushScheduled = false;
    let results: Array<AppendResult | { error: unknown }>;
    try {
      // IMMEDIATE takes the write lock before the first read: a deferred transaction that reads and then
      // writes gets SQLITE_BUSY at once (no busy wait) when another process committed in between.
      results = this.commitBatch.immediate(batch);
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const result = results[i]!;
      if ('error' in result) item.reject(result.error);
      else item.resolve(result);
    });
    this.appended.emit('append');
  }

  async readStream(streamId: string): Promise<RecordedEvent[]> {
    return this.stmts.readStream.all(streamId).map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.stmts.readAll.all(options.after ?? -1n, options.limit ?? 1000).map(toRecorded);
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

  /** Deletes the stream's events and revision in one transaction, after appends already queued. */
  async deleteStream(streamId: string): Promise<void> {
    while (this.queue.length > 0 || this.flushScheduled) await sleep(1);
    this.db.transaction(() => {
      this.stmts.deleteEvents.run(streamId);
      this.stmts.deleteStream.run(streamId);
    })();
  }

  async headPosition(): Promise<bigint> {
    return this.stmts.head.get()?.p ?? -1n;
  }

  async ping(): Promise<void> {
    this.stmts.head.get();
  }

  async close(): Promise<void> {
    while (this.queue.length > 0 || this.flushScheduled) await sleep(1);
    this.db.close();
  }
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
