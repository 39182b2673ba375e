/**
 * One size of bench/rebuildGrowth.bench.ts, in its own process so its memory figures are its own:
 * `node --import tsx bench/rebuildGrowthWorker.ts <teams> <dir>`. Writes the history of `teams` teams
 * (38 events each, made by the real deciders, as in projectionRebuild) straight into an events file
 * with bulk inserts, then measures a raw read of it and a full bulk rebuild; prints one JSON line.
 */
import Database from 'better-sqlite3';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { AesSecretBox } from '../src/adapters/crypto/aesSecretBox.ts';
import { SqliteEventStore } from '../src/adapters/sqlite/sqliteEventStore.ts';
import { SqliteReadModelStore } from '../src/adapters/sqlite/sqliteReadModelStore.ts';
import { allProjections } from '../src/projections/index.ts';
import { ProjectionRunner } from '../src/projections/projectionRunner.ts';
import { teamHistory } from './projectionRebuild.bench.ts';

const teams = Number(process.argv[2]);
const dir = process.argv[3]!;
const eventsFile = join(dir, `events-${teams}.sqlite`);

// The schema, as the store creates it; then rows inserted directly, 50,000 per transaction.
await new SqliteEventStore(eventsFile).close();
const generated = performance.now();
{
  const db = new Database(eventsFile);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const insert = db.prepare('INSERT INTO events (id, stream_id, revision, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const stream = db.prepare('INSERT INTO streams (stream_id, revision) VALUES (?, ?)');
  // Sealing is the slow part of making the history and the projections never open the secret: one
  // real sealed secret stands for every subscription's.
  const sealed = new AesSecretBox(randomBytes(32)).seal(`svc_wh_${randomBytes(32).toString('base64url')}`);
  const box = { seal: () => sealed } as unknown as AesSecretBox;
  const now = BigInt(Date.now());
  let batch: Array<[string, ReturnType<typeof teamHistory>[number][1]]> = [];
  const flush = db.transaction((streams: typeof batch) => {
    for (const [streamId, events] of streams) {
      events.forEach((e, revision) => insert.run(randomUUID(), streamId, revision, e.type, JSON.stringify(e.data), '{}', now));
      stream.run(streamId, events.length - 1);
    }
  });
  let pending = 0;
  for (let t = 0; t < teams; t++) {
    for (const s of teamHistory(t, box)) {
      batch.push(s);
      pending += s[1].length;
    }
    if (pending >= 50_000) {
      flush(batch);
      batch = [];
      pending = 0;
    }
  }
  flush(batch);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}
const generationSeconds = (performance.now() - generated) / 1000;

function rawRead(): { events: number; ms: number } {
  const db = new Database(eventsFile, { readonly: true });
  db.defaultSafeIntegers(true);
  const started = performance.now();
  let events = 0;
  for (const row of db.prepare<[], { data: string; metadata: string }>('SELECT * FROM events ORDER BY position').iterate()) {
    JSON.parse(row.data);
    JSON.parse(row.metadata);
    events++;
  }
  const ms = performance.now() - started;
  db.close();
  return { events, ms };
}
rawRead(); // warms the page cache
const raw = rawRead();

const events = new SqliteEventStore(eventsFile);
const readModels = new SqliteReadModelStore(join(dir, `readmodels-${teams}.sqlite`));
const runner = new ProjectionRunner(events, readModels, allProjections);
await runner.init();
global.gc?.();
const before = process.memoryUsage();
let peakRss = before.rss;
let peakHeap = before.heapUsed;
const sample = () => {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
};
const sampler = setInterval(sample, 25);
const started = performance.now();
const report = await runner.rebuild();
const ms = performance.now() - started;
sample();
clearInterval(sampler);
await readModels.close();
await events.close();
const mb = (n: number) => Math.round(n / 1024 / 1024);
process.stdout.write(
  JSON.stringify({
    teams,
    events: report.events,
    documents: report.documents,
    generationSeconds: Number(generationSeconds.toFixed(1)),
    rawEventsPerSecond: Math.round(raw.events / (raw.ms / 1000)),
    rebuildSeconds: Number((ms / 1000).toFixed(2)),
    rebuildEventsPerSecond: Math.round(report.events / (ms / 1000)),
    rssBeforeMb: mb(before.rss),
    peakRssMb: mb(peakRss),
    heapBeforeMb: mb(before.heapUsed),
    peakHeapUsedMb: mb(peakHeap),
  }) + '\n',
);
