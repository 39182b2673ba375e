/**
 * Fills an events file with `count` events of earlier ingestions (six events per ingestion stream,
 * the JSON a real ingestion records), written with raw better-sqlite3 in one transaction: the
 * event log of a service that has already ingested count/6 messages for other sites. Used by
 * bench/ingestionGrowth.bench.ts through bench/ingestionServer.ts (BENCH_PREFILL_EVENTS).
 */
import Database from 'better-sqlite3';
import { newEventId } from '../src/adapters/sqlite/eventId.js';
import { EVENTS_SCHEMA } from '../src/adapters/sqlite/sqliteEventStore.ts';
import { ingestionDecider } from '../src/domain/ingestion.ts';
import { PITCH } from './ingestionBody.ts';

export function prefillEvents(file: string, count: number): void {
  const events = ingestionDecider.decide(
    {
      type: 'IngestMessage',
      data: {
        ingestionId: '01JBENCHPREFILL00000000000',
        siteId: '01JBENCHOTHERSITE000000000',
        teamId: '01JBENCHOTHERTEAM000000000',
        channel: 'api',
        message: Object.assign({}, PITCH, { bodyHtml: null, messageId: null, inReplyTo: null, references: null }),
        extraction: { ran: false },
        thread: null,
        pause: { aiPaused: false },
        ids: ['01JBENCHID0000000000000001', '01JBENCHID0000000000000002', '01JBENCHID0000000000000003', '01JBENCHID0000000000000004'],
        now: Date.now(),
        requestHash: 'prefill',
      },
    },
    { last: null },
  );
  const rows = events.map((e) => [e.type, JSON.stringify(e.data)] as const);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // A fixture, not a durable write: no fsync while filling, a large page cache.
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  db.exec(EVENTS_SCHEMA);
  const insert = db.prepare('INSERT INTO events (id, stream_id, revision, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const stream = db.prepare('INSERT INTO streams (stream_id, revision) VALUES (?, ?)');
  const now = Date.now();
  db.transaction(() => {
    for (let written = 0, n = 0; written < count; n++) {
      const streamId = `ingestion-prefill-${String(n).padStart(9, '0')}`;
      let revision = 0;
      for (const [type, data] of rows) {
        if (written === count) break;
        // Ids as the service makes them (version 7 UUIDs), dated one millisecond apart in the past, so
        // the measured appends go on at the unique index's end as they would after a long history.
        insert.run(newEventId(now - count + written), streamId, revision++, type, data, '{}', now);
        written++;
      }
      stream.run(streamId, revision - 1);
    }
  })();
  db.close();
}
