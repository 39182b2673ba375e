import t from 'tap';
import { changeSiteSettings, setTeamBillingStatus } from '../../src/commands/tenancy.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { expectError } from '../helpers/http.ts';
import { PITCH, eventsOfType, ingest } from './helpers.ts';

t.test('billing gate: 402 vs 403 SITE_NOT_LICENSED', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const { fastify, services } = app;
  const settle = async () => services.projections.waitFor(await services.events.headPosition(), 5_000);

  t.test('unlicensed site', async (t) => {
    const tenant = await createTenant(services);
    await changeSiteSettings(services, { siteId: tenant.siteId, changes: { licensed: false } });
    await settle();
    expectError(t, await ingest(fastify, tenant, PITCH), 402, 'SITE_NOT_LICENSED', 'runExtraction true (default)');
    expectError(t, await ingest(fastify, tenant, { ...PITCH, runExtraction: true }), 402, 'SITE_NOT_LICENSED', 'runExtraction true');
    expectError(t, await ingest(fastify, tenant, { ...PITCH, runExtraction: false }), 403, 'SITE_NOT_LICENSED', 'runExtraction false');
    const webhooks = await fastify.inject({
      method: 'POST',
      url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks`,
      headers: { authorization: `Bearer ${tenant.key}` },
      payload: { label: 'x', url: 'https://example.com/h', eventTypes: ['outreach.reply_sent'] },
    });
    expectError(t, webhooks, 403, 'SITE_NOT_LICENSED', 'other endpoints keep 403');
    t.equal((await eventsOfType(services, 'MessageIngested')).filter((e) => (e.data as { siteId: string }).siteId === tenant.siteId).length, 0, 'nothing stored');
  });

  t.test('team subscription not healthy', async (t) => {
    for (const status of ['past_due', 'canceled'] as const) {
      const tenant = await createTenant(services);
      await setTeamBillingStatus(services, { teamId: tenant.teamId, billingStatus: status });
      await settle();
      expectError(t, await ingest(fastify, tenant, PITCH), 402, 'SITE_NOT_LICENSED', `${status}, runExtraction true`);
      const direct = await ingest(fastify, tenant, { ...PITCH, runExtraction: false });
      t.equal(direct.statusCode, 201, `${status}, runExtraction false: no billing gate, stored as direct inbound`);
      t.equal(direct.json().entrySource, 'direct_inbound_external');
    }
  });

  t.test('the licence is checked before any replay: a lapsed site gets no stored answer either', async (t) => {
    const tenant = await createTenant(services);
    const first = await ingest(fastify, tenant, PITCH, { 'idempotency-key': 'lapse-1' });
    t.equal(first.statusCode, 201);
    await changeSiteSettings(services, { siteId: tenant.siteId, changes: { licensed: false } });
    await settle();
    expectError(t, await ingest(fastify, tenant, PITCH, { 'idempotency-key': 'lapse-1' }), 402, 'SITE_NOT_LICENSED', 'the repeat is gated too');
    expectError(t, await ingest(fastify, tenant, PITCH, { 'idempotency-key': 'lapse-2' }), 402, 'SITE_NOT_LICENSED', 'a new key is gated');
    await changeSiteSettings(services, { siteId: tenant.siteId, changes: { licensed: true } });
    await settle();
    const replay = await ingest(fastify, tenant, PITCH, { 'idempotency-key': 'lapse-1' });
    t.equal(replay.statusCode, 200, 'licensed again: the stored result is replayed');
    t.same(replay.json(), first.json(), 'identical body');
  });
});
