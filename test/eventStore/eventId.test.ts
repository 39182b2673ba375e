import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { newEventId } from '../../src/adapters/sqlite/eventId.js';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';

/**
 * Event ids are UUIDs of version 7: time first, so the unique index on `events.id` grows at its right
 * edge instead of taking a random page of it per event (BENCHMARKS.md, "event ids in time order").
 */
const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('an event id is a version 7 UUID that starts with its time in milliseconds', async (t) => {
  const now = Date.UTC(2026, 10, 26, 1, 2, 3, 456);
  const id = newEventId(now);
  t.match(id, V7);
  t.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), now, 'the first 48 bits are the time');
  t.equal(newEventId(0).slice(0, 14), '00000000-0000-', 'the epoch is all zeros');
});

t.test('ids are unique, and later ids sort after earlier ones', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 20_000; i += 1) seen.add(newEventId(1_700_000_000_000));
  t.equal(seen.size, 20_000, 'the same millisecond still gives distinct ids (74 random bits)');
  const ids = Array.from({ length: 1_000 }, (_, i) => newEventId(1_700_000_000_000 + i));
  t.same([...ids].sort(), ids, 'ordered by time');
});

t.test('the SQLite event store gives its events such ids, in the order it writes them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'event-id-'));
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < 5; i += 1) {
    await store.append(`stream-${i}`, [{ type: 'Noted', data: { i } }], 'no_stream');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const events = await store.readAll();
  t.equal(events.length, 5);
  for (const event of events) {
    t.match(event.id, V7);
    const ms = parseInt(event.id.replace(/-/g, '').slice(0, 12), 16);
    t.ok(Math.abs(ms - event.createdAt.getTime()) < 1_000, 'the id carries the time of the append');
  }
  const ids = events.map((e) => e.id);
  t.same([...ids].sort(), ids, 'ids sort in log order');
});
