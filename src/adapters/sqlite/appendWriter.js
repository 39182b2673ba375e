// @ts-check
/**
 * The SQLite event store's writes: one transaction per group of operations, each append inside
 * its own savepoint (one append's conflict does not fail the others), IMMEDIATE so the write lock
 * is taken before the first read. Used in two places: by the event store on its own thread when
 * the writer is idle and one append is waiting (no hand-off cost), and by the writer thread (this
 * file run as a worker) when appends arrive concurrently, so the fsync of a group commit never
 * blocks the event loop. Plain JavaScript on purpose: a worker must load without the TypeScript
 * loader (the CLI registers it in-process only).
 */
import Database from 'better-sqlite3';
import { isMainThread, parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { newEventId } from './eventId.js';

/** Opens the write connection (synchronous=FULL) and returns the group-commit function. */
export function openWriter(file) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 10000');
  // As sqliteEventStore.ts (EVENT_LOG_TEMP_STORE): statement journals in memory.
  db.pragma('temp_store = MEMORY');
  db.defaultSafeIntegers(true);
  return { commitOps: createCommitter(db), close: () => db.close() };
}

/** @param {import('better-sqlite3').Database} db */
export function createCommitter(db) {
  const stmts = {
    streamRevision: db.prepare('SELECT revision FROM streams WHERE stream_id = ?'),
    upsertStream: db.prepare(
      'INSERT INTO streams (stream_id, revision) VALUES (?, ?) ON CONFLICT (stream_id) DO UPDATE SET revision = excluded.revision',
    ),
    insert: db.prepare('INSERT INTO events (id, stream_id, revision, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    deleteEvents: db.prepare('DELETE FROM events WHERE stream_id = ?'),
    deleteStream: db.prepare('DELETE FROM streams WHERE stream_id = ?'),
  };

  class Conflict {
    /** @param {bigint | 'no_stream'} actual */
    constructor(actual) {
      this.actual = actual;
    }
  }

  /** Whether the stream's current revision satisfies what the appender expected (see ExpectedRevision). */
  function satisfies(expected, current) {
    return (
      expected === 'any' ||
      (expected === 'no_stream' && current === 'no_stream') ||
      (expected === 'stream_exists' && current !== 'no_stream') ||
      (typeof expected === 'bigint' && current === expected)
    );
  }

  const appendOne = db.transaction((item) => {
    const row = /** @type {{ revision: bigint } | undefined} */ (stmts.streamRevision.get(item.streamId));
    const current = row ? row.revision : 'no_stream';
    if (!satisfies(item.expected, current)) throw new Conflict(current);
    let revision = current === 'no_stream' ? -1n : current;
    let position = -1n;
    for (const [type, data, metadata] of item.events) {
      revision += 1n;
      const info = stmts.insert.run(newEventId(Number(item.now)), item.streamId, revision, type, data, metadata, item.now);
      position = BigInt(info.lastInsertRowid);
    }
    if (item.events.length > 0) stmts.upsertStream.run(item.streamId, revision);
    return { nextExpectedRevision: revision, position };
  });

  const deleteOne = db.transaction((streamId) => {
    stmts.deleteEvents.run(streamId);
    stmts.deleteStream.run(streamId);
    return null;
  });

  const commit = db.transaction((ops) =>
    ops.map((op) => {
      try {
        return { ok: op.kind === 'append' ? appendOne(op) : deleteOne(op.streamId) };
      } catch (error) {
        if (error instanceof Conflict) return { conflict: error.actual };
        return { error: { message: String(error?.message ?? error), code: error?.code } };
      }
    }),
  );

  /** Runs the operations in one IMMEDIATE transaction; never throws: each result says how its op went. */
  return (ops) => {
    try {
      return commit.immediate(ops);
    } catch (error) {
      const failure = { error: { message: String(error?.message ?? error), code: error?.code } };
      return ops.map(() => failure);
    }
  };
}

if (!isMainThread && workerData?.role === 'sqlite-append-writer') {
  /** @typedef {import('node:worker_threads').MessagePort} MessagePort */
  const main = /** @type {MessagePort} */ (parentPort);
  const writer = openWriter(workerData.file);
  // The store that started this thread talks on `main`; the other threads of the process get a port
  // of their own (`{ kind: 'port' }`), so the process has one writing connection to the file and its
  // threads never wait for each other's write lock (SQLite's busy wait sleeps up to 100 ms a try).
  /** @type {Set<MessagePort>} */
  const ports = new Set([main]);
  let closing = false;

  /** @param {MessagePort} port */
  const attach = (port) => {
    ports.add(port);
    port.on('message', (message) => commitWaiting(port, message));
    port.on('close', () => ports.delete(port));
  };

  /** @param {MessagePort} from @param {any} first */
  const commitWaiting = (from, first) => {
    // Drain what else is already waiting on every port: everything that arrived during the last
    // commit goes into the next one, without waiting another turn of the event loop.
    /** @type {Array<{ port: MessagePort, id: number, ops: any[] }>} */
    const batches = [];
    /** @param {MessagePort} port @param {any} m */
    const take = (port, m) => {
      if (m.kind === 'close') closing = true;
      else if (m.kind === 'port') attach(m.port);
      else batches.push({ port, id: m.id, ops: m.ops });
    };
    take(from, first);
    for (const port of ports) {
      for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) take(port, m.message);
    }
    if (batches.length > 0) {
      const results = writer.commitOps(batches.flatMap((b) => b.ops));
      let i = 0;
      for (const batch of batches) {
        batch.port.postMessage({ kind: 'committed', id: batch.id, results: results.slice(i, i + batch.ops.length) });
        i += batch.ops.length;
      }
    }
    if (closing) {
      writer.close();
      for (const port of ports) port.close();
    }
  };
  main.on('message', (message) => commitWaiting(main, message));
}
