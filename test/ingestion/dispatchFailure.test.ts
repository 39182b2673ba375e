import t from 'tap';
import type { EventStore } from '../../src/ports/eventStore.ts';
import { TestClock, createTenant, startTestApp } from '../helpers/testApp.ts';
import { expectError } from '../helpers/http.ts';
import { PITCH, eventsOfType, ingest, makeAgentReady } from './helpers.ts';

/** Our own event-store port with appends to ingestion streams failing (the dispatch cannot be recorded). */
function failingIngestionAppends(inner: EventStore): EventStore & { failing: boolean } {
  const wrapper = Object.create(inner) as EventStore & { failing: boolean };
  wrapper.failing = true;
  wrapper.append = async (streamId, events, expected) => {
    if (wrapper.failing && streamId.startsWith('ingestion')) throw new Error('disk I/O error');
    return inner.append(streamId, events, expected);
  };
  return wrapper;
}

t.test('a dispatch that cannot be recorded: 503 with Retry-After, nothing stored, the retry succeeds', async (t) => {
  const clock = new TestClock(new Date('2026-05-01T09:00:00.000Z'));
  const app = await startTestApp({ clock });
  t.teardown(() => app.close());
  const { fastify, services } = app;
  const tenant = await createTenant(services);
  await makeAgentReady(services, tenant.siteId);
  const { changeSiteSettings } = await import('../../src/commands/tenancy.ts');
  await changeSiteSettings(services, { siteId: tenant.siteId, changes: { dailyIngestionCap: 1, dailyExtractionCap: 1 } });
  await services.projections.waitFor(await services.events.headPosition(), 5_000);

  const real = services.events;
  const failing = failingIngestionAppends(real);
  services.events = failing;
  const before = (await real.readAll({ limit: 100_000 })).length;
  const res = await ingest(fastify, tenant, PITCH, { 'idempotency-key': 'retry-me' });
  expectError(t, res, 503, 'SERVICE_UNAVAILABLE');
  t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After');
  const after = await real.readAll({ limit: 100_000 });
  t.same(after.slice(before).filter((e) => e.type !== 'ApiKeyUsed').map((e) => e.type), [], 'nothing stored');
  t.equal((await eventsOfType(services, 'AgentDispatchRequested')).length, 0);

  failing.failing = false;
  const retry = await ingest(fastify, tenant, PITCH, { 'idempotency-key': 'retry-me' });
  t.equal(retry.statusCode, 201, 'the retry with the same key succeeds with 201');
  t.equal(retry.json().entrySource, 'forwarded_actionable', 'the failed attempt gave back the extraction cap (1)');
  t.equal((await eventsOfType(services, 'AgentDispatchRequested')).length, 1, 'and the dispatch is recorded');
  t.equal((await ingest(fastify, tenant, PITCH, { 'idempotency-key': 'retry-me' })).statusCode, 200);
  expectError(t, await ingest(fastify, tenant, PITCH), 429, 'RATE_LIMITED', 'the failed attempt gave back the ingestion cap (1) too');
  services.events = real;
});

t.test('read models behind: a stored ingestion answers 201 (a 503 would be retried and ingest twice)', async (t) => {
  const app = await startTestApp({ env: { READ_YOUR_WRITES_TIMEOUT_MS: '50' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const projections = app.fastify.projections;
  const waitFor = projections.waitFor;
  projections.waitFor = async () => false;
  let res;
  try {
    res = await ingest(app.fastify, tenant, PITCH);
  } finally {
    projections.waitFor = waitFor;
  }
  t.equal(res.statusCode, 201, res.body);
  const [conversationId] = res.json().conversationIds as string[];
  t.equal((await eventsOfType(app.services, 'MessageIngested')).length, 1, 'stored once');
  t.match(conversationId, /^[0-9A-Z]{26}$/, 'the answer names the conversation');
});
