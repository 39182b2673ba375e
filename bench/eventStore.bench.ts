/**
 * Durable appends per second through the event store port (SqliteEventStore: WAL, synchronous=FULL)
 * against a raw better-sqlite3 loop doing the same SQL with the same durability, in the same run.
 *
 * Each append writes one event to a new stream with expected revision `no_stream`. The raw loop runs,
 * per append, one transaction with the statements the adapter runs (read the stream's revision,
 * insert the event with an id made as the adapter makes it, upsert the stream row) on an identical
 * table shape, so the ratio is the cost of the port itself: promises, the group-commit queue,
 * savepoints, expected-revision checks.
 *
 * - sequential: one append awaited at a time, so every append is its own transaction in both.
 * - concurrent: 64 appends in flight; the port group-commits appends issued in the same tick into one
 *   transaction (one fsync), which is how the API behaves under load. The raw loop stays at one
 *   transaction per append, so this ratio may exceed 100%.
 * The headline ratio is the sequential one (like for like); the concurrent one is reported beside it.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newEventId } from '../src/adapters/sqlite/eventId.js';
import { EVENTS_SCHEMA as SCHEMA, SqliteEventStore } from '../src/adapters/sqlite/sqliteEventStore.ts';
import type { BenchResult } from './types.ts';

const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 2_000);
const ROUNDS = 3;
const IN_FLIGHT = 64;

/** A realistic event body: a webhook subscription as the service records it. */
function eventData(i: number) {
  return {
    subscriptionId: `01JBENCH${String(i).padStart(18, '0')}`,
    teamId: '01JBENCHTEAM000000000000000',
    siteId: '01JBENCHSITE000000000000000',
    label: `Bench subscription ${i}`,
    url: `https://hooks.example.com/outreach/${i}`,
    eventTypes: ['outreach.message_received', 'outreach.opportunity_created'],
    secretPrefix: 'svc_wh_abcd…',
    sealedSecret: 'v1.' + 'x'.repeat(16) + '.' + 'y'.repeat(22) + '.' + 'z'.repeat(58),
    createdByOauthClientId: null,
    createdAt: new Date(1_750_000_000_000 + i).toISOString(),
  };
}

let counter = 0;
const nextStream = () => `bench-${++counter}`;

function rawStore(file: string) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(SCHEMA);
  db.defaultSafeIntegers(true);
  const streamRevision = db.prepare<[string], { revision: bigint }>('SELECT revision FROM streams WHERE stream_id = ?');
  const insert = db.prepare('INSERT INTO events (id, stream_id, revision, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const upsert = db.prepare(
    'INSERT INTO streams (stream_id, revision) VALUES (?, ?) ON CONFLICT (stream_id) DO UPDATE SET revision = excluded.revision',
  );
  const append = db.transaction((streamId: string, data: unknown) => {
    const row = streamRevision.get(streamId);
    if (row) throw new Error('stream exists');
    insert.run(newEventId(), streamId, 0n, 'SubscriptionCreated', JSON.stringify(data), JSON.stringify({}), Date.now());
    upsert.run(streamId, 0n);
  });
  return { append, close: () => db.close() };
}

function rawRound(raw: ReturnType<typeof rawStore>): number {
  const started = performance.now();
  let n = 0;
  while (performance.now() - started < ROUND_MS) raw.append(nextStream(), eventData(n++));
  return n / ((performance.now() - started) / 1000);
}

async function portSequentialRound(store: SqliteEventStore): Promise<number> {
  const started = performance.now();
  let n = 0;
  while (performance.now() - started < ROUND_MS) {
    await store.append(nextStream(), [{ type: 'SubscriptionCreated', data: eventData(n++) }], 'no_stream');
  }
  return n / ((performance.now() - started) / 1000);
}

async function portConcurrentRound(store: SqliteEventStore): Promise<number> {
  const started = performance.now();
  let n = 0;
  const worker = async () => {
    while (performance.now() - started < ROUND_MS) {
      const i = n++;
      await store.append(nextStream(), [{ type: 'SubscriptionCreated', data: eventData(i) }], 'no_stream');
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return n / ((performance.now() - started) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export default async function run(): Promise<BenchResult> {
  const dir = mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), 'outreach-bench-es-'));
  const raw = rawStore(join(dir, 'raw.sqlite'));
  const store = new SqliteEventStore(join(dir, 'port.sqlite'));
  const rates = { raw: [] as number[], sequential: [] as number[], concurrent: [] as number[] };
  try {
    // Warm-up (JIT, file creation), then interleaved rounds so drift hits every variant alike.
    for (let i = 0; i < 50; i++) raw.append(nextStream(), eventData(i));
    for (let i = 0; i < 50; i++) await store.append(nextStream(), [{ type: 'SubscriptionCreated', data: eventData(i) }], 'no_stream');
    for (let round = 0; round < ROUNDS; round++) {
      rates.raw.push(rawRound(raw));
      rates.sequential.push(await portSequentialRound(store));
      rates.concurrent.push(await portConcurrentRound(store));
    }
  } finally {
    raw.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const rawRate = median(rates.raw);
  const sequential = median(rates.sequential);
  const concurrent = median(rates.concurrent);
  const ratio = sequential / rawRate;
  return {
    name: 'event store: durable appends/s',
    figures: {
      'raw better-sqlite3, 1 tx per append (appends/s)': Math.round(rawRate),
      'port, sequential (appends/s)': Math.round(sequential),
      [`port, ${IN_FLIGHT} in flight, group commit (appends/s)`]: Math.round(concurrent),
      'sequential / raw': `${(ratio * 100).toFixed(1)}%`,
      'concurrent / raw': `${((concurrent / rawRate) * 100).toFixed(1)}%`,
      'durability': 'WAL + synchronous=FULL, both',
      'rounds (median of)': `${ROUNDS} × ${ROUND_MS} ms per variant`,
      'directory': dir,
    },
    ratio,
    ratioLabel: 'port sequential / raw loop',
    target: '≥ 60% of raw',
    pass: ratio >= 0.6,
  };
}
