import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { SqliteCounterStore } from '../../src/adapters/sqlite/sqliteCounterStore.ts';

/** A SQLite counter store in a directory of its own, closed and removed after the test; `now` is its service clock. */
export function tempCounterStore(t: Test, now?: () => number): SqliteCounterStore {
  const dir = mkdtempSync(join(tmpdir(), 'counters-'));
  const store = new SqliteCounterStore(join(dir, 'counters.sqlite'), now);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}
