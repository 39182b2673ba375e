import type Database from 'better-sqlite3';
import { openDatabase } from './openDatabase.ts';
import type { CounterStore } from '../../ports/counterStore.ts';

/**
 * Counters in their own SQLite file (WAL). Each increment is one `INSERT ... ON CONFLICT DO UPDATE
 * ... RETURNING` statement, atomic across connections and processes sharing the file; busy_timeout
 * makes concurrent writers queue instead of failing.
 */
export class SqliteCounterStore implements CounterStore {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement<[string, number, number, number], { count: number }>;
  private readonly sweep: Database.Statement<[number]>;
  private writes = 0;

  /** `now` is the service clock: expired windows are swept relative to it. */
  constructor(file: string, private readonly now: () => number = Date.now) {
    // A counter may lose its last increments on power loss; it never loses an event.
    this.db = openDatabase(file, 'NORMAL');
    this.db.exec('CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, count INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID');
    this.upsert = this.db.prepare(
      `INSERT INTO counters (key, count, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET count = count + ?, expires_at = MAX(expires_at, excluded.expires_at)
       RETURNING count`,
    );
    this.sweep = this.db.prepare('DELETE FROM counters WHERE expires_at < ?');
  }

  async increment(key: string, by: number, expiresAt: Date): Promise<number> {
    const row = this.upsert.get(key, by, expiresAt.getTime(), by)!;
    if (++this.writes % 1000 === 0) this.sweep.run(this.now() - 60_000);
    return row.count;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
