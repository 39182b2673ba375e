import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import { treatAsUnavailable } from '../../ports/storeUnavailable.ts';

/**
 * Opens (creating if needed) a SQLite file readable by its owner only: the files hold password and
 * key hashes and sealed secrets. SQLite gives the -wal and -shm files the database file's mode.
 */
export function openDatabase(file: string, synchronous: 'FULL' | 'NORMAL'): Database.Database {
  createOwnerOnly(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  return db;
}

/**
 * Creates the file with mode 0600 when it is missing, and only then: closing any descriptor of a file
 * drops every POSIX lock this process holds on it (fcntl), the shared locks of its open SQLite
 * connections included. Without them another process (an analyst's `sqlite3` shell) closing the file
 * finds it unused, checkpoints and deletes the WAL under the server, whose later writes then go
 * to a file nobody else reads.
 */
function createOwnerOnly(file: string): void {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  closeSync(fd);
}

/** How long a connection waits for another connection's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 10_000;

/** SQLITE_BUSY or one of its extended codes: another connection holds the lock this one needs. */
export const isBusy = (error: unknown): boolean => String((error as { code?: unknown } | null)?.code).startsWith('SQLITE_BUSY');
// Past the busy wait: the store is unavailable for now (a backup, a VACUUM, a stuck CLI); nothing of the write was done.
treatAsUnavailable(isBusy);
