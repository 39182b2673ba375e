import type Database from 'better-sqlite3';
import { BUSY_TIMEOUT_MS, isBusy, openDatabase } from './openDatabase.ts';
import type { CounterStore } from '../../ports/counterStore.ts';

interface PendingIncrement {
  key: string;
  by: number;
  expiresAt: number;
  /** Until when it may wait for another connection's write lock. */
  deadline: number;
  resolve: (count: number) => void;
  reject: (error: unknown) => void;
}

/**
 * Counters in their own SQLite file (WAL). The increments asked for in one turn of the event loop
 * are committed together: one IMMEDIATE transaction, one `INSERT ... ON CONFLICT DO UPDATE ...
 * RETURNING` per distinct key adding the sum of that key's increments. Each caller gets the value
 * its own increment made, as if the increments had run one after another in the order they were
 * asked for, so concurrent callers still read distinct values and nothing is lost. The
 * transaction is atomic across connections and processes sharing the file. Under load this is one
 * commit per turn instead of one per increment (the write tier and the daily caps take three or four
 * per ingestion).
 *
 * Another connection holding the file's write lock (another instance on the same data directory)
 * makes the commit wait on timers, not in SQLite's busy handler: that handler sleeps on the calling
 * thread, which is the API's event loop. Increments asked meanwhile join the waiting batch; one
 * still not committed `lockWaitMs` after it was asked fails with SQLITE_BUSY.
 */
export class SqliteCounterStore implements CounterStore {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement<[string, number, number, number], { count: number }>;
  private readonly sweep: Database.Statement<[number]>;
  private readonly between: Database.Statement<[string, string], { key: string; count: number }>;
  private readonly commit: (batch: PendingIncrement[]) => number[];
  private pending: PendingIncrement[] = [];
  /** A flush is scheduled (next turn, or a retry while another connection holds the lock). */
  private scheduled = false;
  private writes = 0;
  private readonly lockWaitMs: number;

  /** `now` is the service clock: expired windows are swept relative to it. */
  constructor(
    file: string,
    private readonly now: () => number = Date.now,
    options: { lockWaitMs?: number } = {},
  ) {
    this.lockWaitMs = options.lockWaitMs ?? BUSY_TIMEOUT_MS;
    // A counter may lose its last increments on power loss; it never loses an event.
    this.db = openDatabase(file, 'NORMAL');
    // Created while SQLite's busy wait still applies: two processes starting on a fresh data directory.
    this.db.exec('CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, count INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID');
    this.db.pragma('busy_timeout = 0');
    this.upsert = this.db.prepare(
      `INSERT INTO counters (key, count, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET count = count + ?, expires_at = MAX(expires_at, excluded.expires_at)
       RETURNING count`,
    );
    this.sweep = this.db.prepare('DELETE FROM counters WHERE expires_at < ?');
    this.between = this.db.prepare('SELECT key, count FROM counters WHERE key BETWEEN ? AND ? ORDER BY key');
    const transaction = this.db.transaction((batch: PendingIncrement[]) => commitBatch(this.upsert, batch));
    this.commit = (batch) => transaction.immediate(batch);
  }

  increment(key: string, by: number, expiresAt: Date): Promise<number> {
    return new Promise((resolve, reject) => {
      this.pending.push({ key, by, expiresAt: expiresAt.getTime(), deadline: performance.now() + this.lockWaitMs, resolve, reject });
      // After this turn's I/O callbacks: the increments of requests read together commit together.
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush(1));
      }
    });
  }

  /** A read of what is committed (WAL: no lock to wait for), so it sees every increment already resolved. */
  async range(from: string, to: string): Promise<Array<{ key: string; count: number }>> {
    return this.between.all(from, to);
  }

  private flush(retryMs: number): void {
    this.scheduled = false;
    let batch = this.pending;
    this.pending = [];
    let values: number[];
    try {
      values = this.commit(batch);
    } catch (error) {
      if (!isBusy(error)) {
        for (const p of batch) p.reject(error);
        return;
      }
      const at = performance.now();
      for (const p of batch) if (p.deadline <= at) p.reject(error);
      batch = batch.filter((p) => p.deadline > at);
      if (batch.length > 0) {
        // Still first in line: increments asked while waiting commit after these, in the same transaction.
        this.pending = batch.concat(this.pending);
        this.scheduled = true;
        setTimeout(() => this.flush(Math.min(retryMs * 2, MAX_RETRY_MS)), retryMs);
      }
      return;
    }
    batch.forEach((p, i) => p.resolve(values[i]!));
    const before = this.writes;
    this.writes += batch.length;
    if (Math.floor(this.writes / 1000) > Math.floor(before / 1000)) {
      try {
        this.sweep.run(this.now() - 60_000);
      } catch {
        // A sweep that meets a busy file is retried after the next thousand writes.
      }
    }
  }

  /** Settles every increment asked so far: committed, or failed after waiting `lockWaitMs` for the lock. */
  async close(): Promise<void> {
    while (this.pending.length > 0) await new Promise((resolve) => setImmediate(resolve));
    this.db.close();
  }
}

/** The longest pause between two tries for another connection's write lock. */
const MAX_RETRY_MS = 50;

/** One upsert per distinct key; each increment's value is the total before the batch plus the increments up to and including it. */
function commitBatch(upsert: Database.Statement<[string, number, number, number], { count: number }>, batch: PendingIncrement[]): number[] {
  const byKey = new Map<string, { sum: number; expiresAt: number; indexes: number[] }>();
  batch.forEach((p, i) => {
    const group = byKey.get(p.key);
    if (group) {
      group.sum += p.by;
      group.expiresAt = Math.max(group.expiresAt, p.expiresAt);
      group.indexes.push(i);
    } else byKey.set(p.key, { sum: p.by, expiresAt: p.expiresAt, indexes: [i] });
  });
  const values = new Array<number>(batch.length);
  for (const [key, group] of byKey) {
    const total = upsert.get(key, group.sum, group.expiresAt, group.sum)!.count;
    let running = total - group.sum;
    for (const i of group.indexes) values[i] = running += batch[i]!.by;
  }
  return values;
}
