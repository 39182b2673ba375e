import { accessSync, constants, copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { constants as os, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import type { Config } from '../config.ts';
import type { EventStore } from '../ports/eventStore.ts';
import { eventLogFile, openEventStore } from '../services.ts';

export interface EventLogToRead {
  events: EventStore;
  /** Read from a copy taken at open: later appends to the log are not seen. */
  snapshot: boolean;
  close(): Promise<void>;
}

/**
 * The event log for the auditor's commands (`outreach events read|tail`). A DATA_DIR this user may
 * not write to (a read-only mount, a copy kept for an audit) is read as it is, nothing created or
 * changed in it. A WAL-mode file SQLite cannot open so (no `-shm` beside it, which only a writer
 * that has it open keeps, and none may be created) is read from a private copy in the temporary
 * directory, removed when the command ends, also by a signal or a closed pipe.
 */
export async function openEventLogToRead(config: Config): Promise<EventLogToRead> {
  if (config.EVENTSTORE_URL || writable(config.DATA_DIR)) {
    const events = await openEventStore(config);
    return { events, snapshot: false, close: () => events.close() };
  }
  const file = eventLogFile(config);
  try {
    const events = new SqliteEventStore(file, { readOnly: true });
    return { events, snapshot: false, close: () => events.close() };
  } catch (error) {
    if (!needsCopy(error)) throw error;
  }
  return readFromCopy(file);
}

/**
 * The errors of a read-only open that a copy avoids: the directory refuses the `-wal` or `-shm`
 * file (EACCES: READONLY_DIRECTORY), or a read-only mount does (EROFS: CANTOPEN).
 */
export function needsCopy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'SQLITE_READONLY_DIRECTORY' || code === 'SQLITE_CANTOPEN';
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function readFromCopy(file: string): EventLogToRead {
  // Private to this user (mode 0700); the copy holds what the log holds (hashes, sealed secrets).
  const dir = mkdtempSync(join(tmpdir(), 'outreach-events-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  // process.exit (a closed pipe) runs the exit listeners; a signal would not, so it exits.
  const onSignal = (signal: (typeof SIGNALS)[number]) => process.exit(128 + os.signals[signal]);
  process.once('exit', remove);
  for (const signal of SIGNALS) process.once(signal, onSignal);
  const forget = () => {
    remove();
    process.off('exit', remove);
    for (const signal of SIGNALS) process.off(signal, onSignal);
  };
  try {
    const copy = join(dir, 'events.sqlite');
    copyFileSync(file, copy);
    if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
    const events = new SqliteEventStore(copy, { readOnly: true });
    return {
      events,
      snapshot: true,
      async close() {
        try {
          await events.close();
        } finally {
          forget();
        }
      },
    };
  } catch (error) {
    forget();
    throw error;
  }
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
