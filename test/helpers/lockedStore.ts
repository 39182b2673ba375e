import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { openDatabase } from '../../src/adapters/sqlite/openDatabase.ts';

/** SQLITE_BUSY as better-sqlite3 raises it: a write to a file whose write lock another connection holds. */
export function lockedFileError(t: Test): unknown {
  const dir = mkdtempSync(join(tmpdir(), 'locked-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const holder = openDatabase(join(dir, 'x.sqlite'), 'FULL');
  holder.exec('CREATE TABLE x (v)');
  holder.exec('BEGIN IMMEDIATE');
  const waiter = new Database(join(dir, 'x.sqlite'), { timeout: 0 });
  try {
    waiter.exec('INSERT INTO x VALUES (1)');
  } catch (error) {
    return error;
  } finally {
    waiter.close();
    holder.close();
  }
  throw new Error('expected SQLITE_BUSY');
}
