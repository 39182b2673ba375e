/**
 * Where a bulk rebuild's time goes, phase by phase, on the projectionRebuild benchmark's history:
 * the raw read (the benchmark's baseline), the read through the event-store port, the schema check
 * at the store's edge, the in-memory fold of every projection, JSON.stringify of the final documents,
 * and the write through `beginRebuild` (stringify, shadow table, switch). Each phase is timed alone,
 * 5 rounds; the minimum is the least disturbed. Not part of `npm run bench` (no ratio, no target).
 *
 *   node --import tsx bench/rebuildPhases.ts
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../src/adapters/sqlite/sqliteEventStore.ts';
import { SqliteReadModelStore } from '../src/adapters/sqlite/sqliteReadModelStore.ts';
import { toDomainEvent } from '../src/lib/parseEvent.ts';
import type { RecordedEvent } from '../src/ports/eventStore.ts';
import { allProjections } from '../src/projections/index.ts';
import { RebuildFold } from '../src/projections/rebuildFold.ts';
import { buildHistory } from './projectionRebuild.bench.ts';

const dir = mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), 'outreach-rebuild-phases-'));
const file = join(dir, 'events.sqlite');

function rawRead(): number {
  const db = new Database(file, { readonly: true });
  db.defaultSafeIntegers(true);
  const started = performance.now();
  for (const row of db.prepare<[], { data: string; metadata: string }>('SELECT * FROM events ORDER BY position').iterate()) {
    JSON.parse(row.data);
    JSON.parse(row.metadata);
  }
  const ms = performance.now() - started;
  db.close();
  return ms;
}

const phases: Record<string, number[]> = {};
const record = (phase: string, ms: number) => (phases[phase] ??= []).push(ms);

try {
  await buildHistory(file);
  for (let round = 0; round < 5; round++) {
    record('raw SELECT + JSON.parse', rawRead());
    const events = new SqliteEventStore(file);
    const readModels = new SqliteReadModelStore(join(dir, `readmodels-${round}.sqlite`));
    let started = performance.now();
    const pages: RecordedEvent[][] = [];
    for (let after = -1n; ; ) {
      const page = await events.readAll({ after, limit: 5_000 });
      if (page.length === 0) break;
      pages.push(page);
      after = page[page.length - 1]!.position;
    }
    record('readAll through the port', performance.now() - started);
    started = performance.now();
    for (const page of pages) for (const event of page) toDomainEvent(event);
    record('schema check (toDomainEvent)', performance.now() - started);
    const folds = allProjections.map((p) => new RebuildFold(p, readModels));
    started = performance.now();
    for (const page of pages) {
      for (const event of page) for (const fold of folds) if (fold.projection.canHandle(event.type)) await fold.projection.handle(event, fold.at(event.position));
    }
    record('fold (projection handlers in memory)', performance.now() - started);
    started = performance.now();
    for (const fold of folds) for (const [, docs] of fold.batches(5_000)) for (const d of docs) JSON.stringify(d.doc);
    record('JSON.stringify of the final documents', performance.now() - started);
    started = performance.now();
    for (const fold of folds) {
      const target = await readModels.beginRebuild(fold.projection.name, fold.projection.collections);
      for (const [collection, docs] of fold.batches(5_000)) await target.write(collection, docs);
      await target.commit(fold.projection.version, 1n);
    }
    record('write (stringify + shadow + switch)', performance.now() - started);
    await readModels.close();
    await events.close();
  }
  for (const [phase, ms] of Object.entries(phases)) {
    console.log(`${phase.padEnd(40)} min ${Math.min(...ms).toFixed(0).padStart(5)} ms   rounds ${ms.map((x) => x.toFixed(0)).join(' ')}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
