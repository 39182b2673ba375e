// A store that is unavailable for now (EventStoreDB or MongoDB unreachable, an embedded SQLite file
// locked by another process past the busy wait) is 503 SERVICE_UNAVAILABLE with Retry-After, not 500.
// The errors are the real clients' own, met against a closed port and a locked file.
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { MongoClient, MongoServerError } from 'mongodb';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { EsdbEventStore } from '../../src/adapters/eventstoredb/esdbEventStore.ts';
import '../../src/adapters/mongodb/mongoReadModelStore.ts';
import { openDatabase } from '../../src/adapters/sqlite/openDatabase.ts';
import { installErrorHandling } from '../../src/http/errorHandler.ts';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function thrown(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

t.test('an unavailable store is 503 with Retry-After; anything else unexpected stays 500', async (t) => {
  const port = await closedPort();
  const esdb = new EsdbEventStore(`esdb://127.0.0.1:${port}?tls=false`);
  t.teardown(() => esdb.close());
  const mongo = new MongoClient(`mongodb://127.0.0.1:${port}/?serverSelectionTimeoutMS=300&directConnection=true`);
  t.teardown(() => mongo.close());
  const dir = mkdtempSync(join(tmpdir(), 'locked-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const holder = openDatabase(join(dir, 'x.sqlite'), 'FULL');
  holder.exec('CREATE TABLE x (v)');
  holder.exec('BEGIN IMMEDIATE');
  t.teardown(() => holder.close());
  const waiter = new Database(join(dir, 'x.sqlite'), { timeout: 0 });
  t.teardown(() => waiter.close());

  const failures: Record<string, unknown> = {
    'EventStoreDB append': await thrown(() => esdb.append('s-1', [{ type: 'X', data: {} }], 'no_stream')),
    'EventStoreDB read': await thrown(() => esdb.readAll({ limit: 1 })),
    'MongoDB with no server to select': await thrown(() => mongo.db('x').collection('y').findOne({})),
    'SQLite locked by another connection': await thrown(async () => waiter.exec('INSERT INTO x VALUES (1)')),
  };
  const app = Fastify({ logger: false });
  installErrorHandling(app, 1_000);
  app.get('/fail/:name', async (request) => {
    throw failures[(request.params as { name: string }).name];
  });
  app.get('/other', async () => {
    throw new MongoServerError({ message: 'E11000 duplicate key', code: 11000 });
  });
  await app.ready();
  t.teardown(() => app.close());
  for (const name of Object.keys(failures)) {
    const res = await app.inject({ method: 'GET', url: `/fail/${encodeURIComponent(name)}` });
    t.equal(res.statusCode, 503, `${name}: 503`);
    t.equal(res.headers['retry-after'], '1', `${name}: Retry-After`);
    t.equal(res.json().error.code, 'SERVICE_UNAVAILABLE', name);
  }
  t.equal((await app.inject({ method: 'GET', url: '/other' })).statusCode, 500, 'a store error that a retry will not cure stays 500');
});
