import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';

/**
 * Opens (creating if needed) a SQLite file readable by its owner only: the files hold password and
 * key hashes and sealed secrets. SQLite gives the -wal and -shm files the database file's mode.
 */
export function openDatabase(file: string, synchronous: 'FULL' | 'NORMAL'): Database.Database {
  closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma(`temp_store = ${TEMP_STORE}`);
  return db;
}

/** How long a connection waits for another connection's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 10_000;

/**
 * Statement journals in memory. An insert that may fire a trigger (every insert into the event log,
 * which carries the marks' triggers) keeps one for its savepoint. In a temporary file, the default,
 * every commit created, wrote (about 140 `pwrite`s for a group of four ingestions) and deleted one:
 * about a third of the writer's CPU per ingestion. Only a rollback inside a live transaction reads
 * it, so durability does not depend on where it is.
 */
export const TEMP_STORE = 'MEMORY';
