import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import { importProspects, loadProspects, skipProspect } from '../../src/commands/prospects.ts';
import { aggregateStream } from '../../src/commands/aggregateStream.ts';
import { siteStream } from '../../src/domain/site.ts';
import { prospectsDecider, prospectsStream } from '../../src/domain/prospects.ts';
import type { EventStore, ReadStreamOptions } from '../../src/ports/eventStore.ts';
import { TestClock } from '../helpers/testApp.ts';

/**
 * An outreach run decides on the site's prospects stream once per prospect it pitches or skips, and
 * the stream grows with each: read whole every time, a run of n prospects read n² events on the
 * thread every request shares (an audit measured team B's median request at 116 ms during one run).
 * The fold is carried on: each decision reads what was appended since the last.
 */
t.test("a run's decisions on the prospects stream read only what is new, and decide as a full read would", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'prospects-folding-'));
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  let read = 0;
  const readStream = async (streamId: string, options?: ReadStreamOptions) => {
    const out = await store.readStream(streamId, options);
    if (streamId.startsWith('prospects-')) read += out.length;
    return out;
  };
  // The real store (its appends run on it, not on a copy), counting the events each readStream returns.
  const events = new Proxy(store, {
    get: (target, prop) => {
      if (prop === 'readStream') return readStream;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as EventStore;
  let id = 0;
  const ctx = { events, clock: new TestClock(new Date('2026-05-01T10:00:00Z')), secrets: null as never, newId: () => `ID${(id += 1)}` };
  await store.append(siteStream('S'), [{ type: 'SiteCreated', data: { siteId: 'S', teamId: 'T', domain: 'a.example', plan: 'advanced', forwardingToken: 'x', createdAt: '2026-05-01T10:00:00.000Z' } }], 'no_stream');
  const urls = Array.from({ length: 300 }, (_, i) => `https://p${i}.example`);
  for (let i = 0; i < 3; i++) {
    await importProspects(ctx, { siteId: 'S', teamId: 'T', prospects: urls.slice(i * 100, i * 100 + 100).map((url) => ({ url, name: null, notes: null })) });
  }
  read = 0;
  for (const url of urls.slice(0, 200)) {
    await skipProspect(ctx, { siteId: 'S', teamId: 'T', prospectUrl: url, reason: 'unreachable', detail: 'x', runId: 'R' });
  }
  t.ok(read < 1_000, `200 decisions read ${read} events of the stream (a full read each time: over 20,000)`);
  const state = await loadProspects(ctx, 'S');
  const full = (await aggregateStream(store, prospectsStream('S'), prospectsDecider)).state;
  t.same([...state.prospects.entries()], [...full.prospects.entries()], 'the same prospects and statuses as a full read');
  t.equal([...full.prospects.values()].filter((p) => p.status === 'skipped').length, 200);
});
