import t from 'tap';
import { createApiKey, setTeamBillingStatus } from '../../src/commands/tenancy.ts';
import { TestClock, createTenant, startTestApp } from '../helpers/testApp.ts';
import { expectError } from '../helpers/http.ts';
import { PITCH, UNACTIONABLE, eventsOfType, ingest } from './helpers.ts';

const HOUR = 60 * 60 * 1000;

t.test('Idempotency-Key', async (t) => {
  const clock = new TestClock(new Date('2026-03-10T08:00:00.000Z'));
  const app = await startTestApp({ clock, env: { WRITE_RATE_LIMIT_PER_MINUTE: '100000' } });
  t.teardown(() => app.close());
  const { fastify, services } = app;
  const tenant = await createTenant(services);

  t.test('shape: at most 128 characters from alphanumerics . _ - :', async (t) => {
    const ok128 = 'a'.repeat(120) + '.-_:AZ09';
    t.equal(ok128.length, 128);
    t.equal((await ingest(fastify, tenant, UNACTIONABLE, { 'idempotency-key': ok128 })).statusCode, 201, '128 characters accepted');
    expectError(t, await ingest(fastify, tenant, UNACTIONABLE, { 'idempotency-key': 'a'.repeat(129) }), 400, 'VALIDATION_ERROR', '129 characters');
    for (const bad of ['has space', 'slash/key', 'emoji✓', 'semi;colon', '']) {
      expectError(t, await ingest(fastify, tenant, UNACTIONABLE, { 'idempotency-key': bad }), 400, 'VALIDATION_ERROR', `key ${JSON.stringify(bad)}`);
    }
  });

  t.test('a repeat within 24 hours replays the stored body with 200; after 24 hours it is fresh', async (t) => {
    const key = 'order-1';
    const first = await ingest(fastify, tenant, PITCH, { 'idempotency-key': key });
    t.equal(first.statusCode, 201);
    const before = (await eventsOfType(services, 'MessageIngested')).length;
    clock.advance(24 * HOUR - 1);
    const repeat = await ingest(fastify, tenant, PITCH, { 'idempotency-key': key });
    t.equal(repeat.statusCode, 200, 'a repeat replays');
    t.equal(repeat.body, first.body, 'the identical body');
    expectError(t, await ingest(fastify, tenant, { ...UNACTIONABLE, runExtraction: false }, { 'idempotency-key': key }), 409, 'IDEMPOTENCY_KEY_REUSED', 'the key with another body');
    t.equal((await eventsOfType(services, 'MessageIngested')).length, before, 'nothing new stored');
    clock.advance(1);
    const fresh = await ingest(fastify, tenant, PITCH, { 'idempotency-key': key });
    t.equal(fresh.statusCode, 201, 'exactly 24 hours later the key starts a fresh ingestion');
    t.not(fresh.json().conversationIds[0], first.json().conversationIds[0]);
    const again = await ingest(fastify, tenant, PITCH, { 'idempotency-key': key });
    t.equal(again.statusCode, 200);
    t.equal(again.body, fresh.body, 'and that fresh result is what the key replays now');
  });

  t.test('keys are scoped to the credential: two keys with one value do not collide', async (t) => {
    const second = await createApiKey(services, { teamId: tenant.teamId, name: 'second', scopes: ['inbox:write'], siteId: null });
    await services.projections.waitFor(second.position!, 5_000);
    const a = await ingest(fastify, tenant, PITCH, { 'idempotency-key': 'shared-value' });
    const b = await ingest(fastify, { siteId: tenant.siteId, key: second.key }, PITCH, { 'idempotency-key': 'shared-value' });
    t.equal(a.statusCode, 201);
    t.equal(b.statusCode, 201, 'the other credential gets its own ingestion');
    t.not(a.json().conversationIds[0], b.json().conversationIds[0]);
    t.equal((await ingest(fastify, { siteId: tenant.siteId, key: second.key }, PITCH, { 'idempotency-key': 'shared-value' })).body, b.body);
  });

  t.test('50 concurrent requests with one key: one ingestion, one 201 and 49 identical 200s', async (t) => {
    const key = 'concurrent-50';
    const before = (await eventsOfType(services, 'IngestionRecorded')).length;
    const responses = await Promise.all(Array.from({ length: 50 }, () => ingest(fastify, tenant, PITCH, { 'idempotency-key': key })));
    const created = responses.filter((r) => r.statusCode === 201);
    const replayed = responses.filter((r) => r.statusCode === 200);
    t.equal(created.length, 1, 'one 201');
    t.equal(replayed.length, 49, '49 200s');
    t.ok(replayed.every((r) => r.body === created[0]!.body), 'every replay has the identical body');
    t.equal((await eventsOfType(services, 'IngestionRecorded')).length - before, 1, 'one ingestion in the store');
  });

  t.test('concurrent requests across two instances sharing one store: still one ingestion', async (t) => {
    const other = await startTestApp({ clock, dataDir: app.dataDir, env: { WRITE_RATE_LIMIT_PER_MINUTE: '100000' } });
    t.teardown(() => other.close());
    await other.services.projections.waitFor(await other.services.events.headPosition(), 5_000);
    const key = 'two-instances';
    const before = (await eventsOfType(services, 'IngestionRecorded')).length;
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => ingest(i % 2 ? other.fastify : fastify, tenant, PITCH, { 'idempotency-key': key })),
    );
    t.equal(responses.filter((r) => r.statusCode === 201).length, 1, 'one 201');
    t.equal(responses.filter((r) => r.statusCode === 200).length, 19, '19 replays');
    t.equal(new Set(responses.map((r) => r.body)).size, 1, 'one body');
    t.equal((await eventsOfType(services, 'IngestionRecorded')).length - before, 1, 'one ingestion');
  });

  t.test('a failed request is not stored as the key result', async (t) => {
    await setTeamBillingStatus(services, { teamId: tenant.teamId, billingStatus: 'past_due' });
    await services.projections.waitFor(await services.events.headPosition(), 5_000);
    expectError(t, await ingest(fastify, tenant, PITCH, { 'idempotency-key': 'after-failure' }), 402, 'SITE_NOT_LICENSED');
    expectError(t, await ingest(fastify, tenant, { from: 'bad' }, { 'idempotency-key': 'after-failure' }), 400, 'VALIDATION_ERROR');
    await setTeamBillingStatus(services, { teamId: tenant.teamId, billingStatus: 'healthy' });
    await services.projections.waitFor(await services.events.headPosition(), 5_000);
    const ok = await ingest(fastify, tenant, PITCH, { 'idempotency-key': 'after-failure' });
    t.equal(ok.statusCode, 201, 'the key runs afresh once the request can succeed');
  });
});
