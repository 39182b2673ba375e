// A store that is unavailable for now (EventStoreDB or MongoDB unreachable, an embedded SQLite file
// locked by another process past the busy wait) is 503 SERVICE_UNAVAILABLE with Retry-After, not 500.
// The errors are the real clients' own, met against a closed port and a locked file.
import Fastify from 'fastify';
import { MongoClient, MongoServerError } from 'mongodb';
import { createServer } from 'node:net';
import t from 'tap';
import { EsdbEventStore } from '../../src/adapters/eventstoredb/esdbEventStore.ts';
import '../../src/adapters/mongodb/mongoReadModelStore.ts';
import { installErrorHandling } from '../../src/http/errorHandler.ts';
import { lockedFileError } from '../helpers/lockedStore.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';

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

  const failures: Record<string, unknown> = {
    'EventStoreDB append': await thrown(() => esdb.append('s-1', [{ type: 'X', data: {} }], 'no_stream')),
    'EventStoreDB read': await thrown(() => esdb.readAll({ limit: 1 })),
    'MongoDB with no server to select': await thrown(() => mongo.db('x').collection('y').findOne({})),
    'SQLite locked by another connection': lockedFileError(t),
  };
  const app = Fastify({ logger: false });
  installErrorHandling(app, 1_000);
  app.get('/fail/:name', async (request) => {
    throw failures[(request.params as { name: string }).name];
  });
  app.get('/other/:code', async (request) => {
    throw new MongoServerError({ message: 'a MongoDB error', code: Number((request.params as { code: string }).code) });
  });
  await app.ready();
  t.teardown(() => app.close());
  for (const name of Object.keys(failures)) {
    const res = await app.inject({ method: 'GET', url: `/fail/${encodeURIComponent(name)}` });
    t.equal(res.statusCode, 503, `${name}: 503`);
    t.equal(res.headers['retry-after'], '1', `${name}: Retry-After`);
    t.equal(res.json().error.code, 'SERVICE_UNAVAILABLE', name);
  }
  // 11000: a duplicate key; 14: TypeMismatch, which is gRPC's UNAVAILABLE too (the EventStoreDB test took it for one).
  for (const code of [11000, 14, 4]) {
    const res = await app.inject({ method: 'GET', url: `/other/${code}` });
    t.equal(res.statusCode, 500, `MongoDB error ${code}, which a retry will not cure, stays 500`);
    t.same(res.json(), { error: { code: 'INTERNAL_ERROR', message: 'Internal server error.' } }, `MongoDB error ${code}: the spec's envelope`);
  }
});

t.test('through the service: a list whose read-model store is locked answers 503 with Retry-After, then the list once it is back', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const busy = lockedFileError(t);
  const store = app.services.readModels;
  const page = store.page.bind(store);
  store.page = (async () => {
    throw busy;
  }) as typeof store.page;
  const url = `/api/v1/sites/${tenant.siteId}/outreach/conversations`;
  const refused = await app.fastify.inject({ method: 'GET', url, headers: bearer(tenant.key) });
  t.equal(refused.statusCode, 503);
  t.equal(refused.headers['retry-after'], '1');
  t.equal(refused.json().error.code, 'SERVICE_UNAVAILABLE');
  store.page = page;
  t.equal((await app.fastify.inject({ method: 'GET', url, headers: bearer(tenant.key) })).statusCode, 200, 'the store back: answered');
});
