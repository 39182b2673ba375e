import { accessSync, constants, copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import type { Config } from '../config.ts';
import type { EventStore } from '../ports/eventStore.ts';
import { eventLogFile, openEventStore } from '../services.ts';

/**
 * The event log for the auditor's commands (`outreach events read|tail`). A DATA_DIR this user may
 * not write to (a read-only mount, a copy kept for an audit) is read as it is, nothing created or
 * changed in it. A WAL-mode file left by a clean stop cannot be read so (SQLite needs its
 * shared-memory file, or a directory it may create one in; no process writes the file then): it is
 * read from a private copy in the temporary directory, removed when the command ends.
 */
export async function openEventLogToRead(config: Config): Promise<{ events: EventStore; close(): Promise<void> }> {
  if (config.EVENTSTORE_URL || writable(config.DATA_DIR)) {
    const events = await openEventStore(config);
    return { events, close: () => events.close() };
  }
  const file = eventLogFile(config);
  try {
    const events = new SqliteEventStore(file, { readOnly: true });
    return { events, close: () => events.close() };
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'SQLITE_READONLY_DIRECTORY') throw error;
  }
  const dir = mkdtempSync(join(tmpdir(), 'outreach-events-'));
  try {
    const copy = join(dir, 'events.sqlite');
    copyFileSync(file, copy);
    if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
    const events = new SqliteEventStore(copy, { readOnly: true });
    return {
      events,
      async close() {
        try {
          await events.close();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
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
