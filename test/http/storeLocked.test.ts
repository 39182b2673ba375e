// An embedded store locked by another process past the busy wait (SQLITE_BUSY from the adapter) is a
// temporarily unavailable dependency: 503 SERVICE_UNAVAILABLE with Retry-After, not 500.
import Fastify from 'fastify';
import t from 'tap';
import { installErrorHandling } from '../../src/http/errorHandler.ts';

t.test('SQLITE_BUSY from a store is 503 with Retry-After', async (t) => {
  const app = Fastify({ logger: false });
  installErrorHandling(app, 1_000);
  app.post('/busy', async () => {
    throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  });
  app.post('/other', async () => {
    throw new Error('boom');
  });
  await app.ready();
  t.teardown(() => app.close());
  const busy = await app.inject({ method: 'POST', url: '/busy' });
  t.equal(busy.statusCode, 503);
  t.equal(busy.headers['retry-after'], '1');
  t.equal(busy.json().error.code, 'SERVICE_UNAVAILABLE');
  t.equal((await app.inject({ method: 'POST', url: '/other' })).statusCode, 500, 'anything else unexpected stays 500');
});
