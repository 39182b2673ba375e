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
  return db;
}

/** How long a connection waits for another connection's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 10_000;

/** SQLITE_BUSY or one of its extended codes: another connection holds the lock this one needs. */
export const isBusy = (error: unknown): boolean => String((error as { code?: unknown } | null)?.code).startsWith('SQLITE_BUSY');
