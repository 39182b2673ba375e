import t from 'tap';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { TestClock, bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { expectError } from '../helpers/http.ts';
import { PITCH, UNACTIONABLE, ingest } from './helpers.ts';

const settle = async (services: { projections: { waitFor(p: bigint, ms: number): Promise<boolean> }; events: { headPosition(): Promise<bigint> } }) =>
  services.projections.waitFor(await services.events.headPosition(), 5_000);

t.test('daily ingestion cap: the 500th of the UTC day is accepted, the 501st refused', async (t) => {
  const clock = new TestClock(new Date('2026-04-01T00:00:00.000Z'));
  const app = await startTestApp({ clock, env: { WRITE_RATE_LIMIT_PER_MINUTE: '100000' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const body = { ...UNACTIONABLE, runExtraction: false };
  let accepted = 0;
  for (let i = 0; i < 499; i++) if ((await ingest(app.fastify, tenant, body)).statusCode === 201) accepted++;
  t.equal(accepted, 499);
  clock.current = new Date('2026-04-01T23:59:59.000Z');
  t.equal((await ingest(app.fastify, tenant, body)).statusCode, 201, 'the 500th is accepted');
  const refused = await ingest(app.fastify, tenant, body);
  expectError(t, refused, 429, 'RATE_LIMITED', 'the 501st');
  t.equal(refused.headers['retry-after'], '1', 'Retry-After counts to midnight UTC');
  expectError(t, await ingest(app.fastify, tenant, body, { 'idempotency-key': 'k-501' }), 429, 'RATE_LIMITED', 'a keyed 502nd');

  await changeSiteSettings(app.services, { siteId: tenant.siteId, changes: { dailyIngestionCap: 501 } });
  await settle(app.services);
  t.equal((await ingest(app.fastify, tenant, body)).statusCode, 201, 'refused requests did not consume the cap');
  expectError(t, await ingest(app.fastify, tenant, body), 429, 'RATE_LIMITED', 'then the cap of 501 is full');

  const other = await createTenant(app.services);
  t.equal((await ingest(app.fastify, other, body)).statusCode, 201, 'the cap is per site');
  clock.current = new Date('2026-04-02T00:00:00.000Z');
  t.equal((await ingest(app.fastify, tenant, body)).statusCode, 201, 'a new UTC day starts a new count');
});

t.test('daily cap holds across two instances sharing one store, under concurrency', async (t) => {
  const clock = new TestClock(new Date('2026-04-05T10:00:00.000Z'));
  const a = await startTestApp({ clock, env: { WRITE_RATE_LIMIT_PER_MINUTE: '100000' } });
  t.teardown(() => a.close());
  const b = await startTestApp({ clock, dataDir: a.dataDir, env: { WRITE_RATE_LIMIT_PER_MINUTE: '100000' } });
  t.teardown(() => b.close());
  const tenant = await createTenant(a.services);
  await changeSiteSettings(a.services, { siteId: tenant.siteId, changes: { dailyIngestionCap: 25 } });
  await settle(a.services);
  await settle(b.services);
  const body = { ...UNACTIONABLE, runExtraction: false };
  const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => ingest(i % 2 ? b.fastify : a.fastify, tenant, body)));
  t.equal(responses.filter((r) => r.statusCode === 201).length, 25, 'exactly the cap is accepted');
  t.equal(responses.filter((r) => r.statusCode === 429).length, 35, 'the rest refused');
});

t.test('write tier: 60 writes per minute per team across write endpoints', async (t) => {
  const clock = new TestClock(new Date('2026-04-06T10:00:00.000Z'));
  const app = await startTestApp({ clock });
  t.teardown(() => app.close());
  const other = await startTestApp({ clock, dataDir: app.dataDir });
  t.teardown(() => other.close());
  const tenant = await createTenant(app.services);
  const neighbour = await createTenant(app.services);
  await settle(other.services);
  const body = { ...UNACTIONABLE, runExtraction: false };
  const webhook = (fastify: typeof app.fastify) =>
    fastify.inject({
      method: 'POST',
      url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks`,
      headers: bearer(tenant.key),
      payload: { label: 'crm', url: 'https://example.com/hook', eventTypes: ['outreach.reply_sent'] },
    });
  const statuses: number[] = [];
  for (let i = 0; i < 59; i++) {
    // Mixed endpoints and two instances sharing the store: one count per team.
    const fastify = i % 2 ? other.fastify : app.fastify;
    statuses.push(i % 10 === 0 ? (await webhook(fastify)).statusCode : (await ingest(fastify, tenant, body)).statusCode);
  }
  t.ok(statuses.every((s) => s === 201), '59 writes accepted');
  t.equal((await ingest(app.fastify, tenant, body)).statusCode, 201, 'the 60th write is accepted');
  const refused = await ingest(other.fastify, tenant, body);
  expectError(t, refused, 429, 'RATE_LIMITED', 'the 61st write');
  t.equal(refused.headers['retry-after'], '61', 'Retry-After: seconds until the last 60 s hold fewer than 60 writes (sliding window)');
  const refusedWebhook = await webhook(app.fastify);
  expectError(t, refusedWebhook, 429, 'RATE_LIMITED', 'webhook create shares the tier');
  for (const path of [`/%61pi/v1/sites/${tenant.siteId}/outreach/inbox/messages`, `/api/%761/sites/${tenant.siteId}/outreach/inbox/messages`]) {
    // The router decodes percent-escapes: the same route, so the same tier.
    const encoded = await app.fastify.inject({ method: 'POST', url: path, headers: bearer(tenant.key), payload: body });
    expectError(t, encoded, 429, 'RATE_LIMITED', `${path.split('/sites/')[0]}/…: a percent-encoded path shares the tier`);
  }
  const del = await app.fastify.inject({ method: 'DELETE', url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks/01ARZ3NDEKTSV4RRFFQ69G5FAV`, headers: bearer(tenant.key) });
  expectError(t, del, 429, 'RATE_LIMITED', 'webhook delete shares the tier');
  const read = await app.fastify.inject({ method: 'GET', url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks`, headers: bearer(tenant.key) });
  t.equal(read.statusCode, 200, 'reads are not in the write tier');
  t.equal((await ingest(app.fastify, neighbour, body)).statusCode, 201, 'another team has its own tier');
  clock.advance(30_000);
  const halfway = await ingest(app.fastify, tenant, body);
  expectError(t, halfway, 429, 'RATE_LIMITED', 'refused requests do not count, but the 60 accepted still do');
  t.equal(halfway.headers['retry-after'], '31');
  clock.advance(30_000);
  const boundary = await ingest(app.fastify, tenant, body);
  expectError(t, boundary, 429, 'RATE_LIMITED', 'a new clock minute does not reopen the tier: the last 60 s still hold 60 writes');
  t.equal(boundary.headers['retry-after'], '1');
  clock.advance(1_000);
  t.equal((await ingest(app.fastify, tenant, body)).statusCode, 201, 'open again once a write falls out of the last 60 s');
});

t.test('write tier: writes made more than 60 s ago no longer count, whatever clock minute they fell in', async (t) => {
  const clock = new TestClock(new Date('2026-04-06T10:00:10.000Z'));
  const app = await startTestApp({ clock });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const body = { ...UNACTIONABLE, runExtraction: false };
  const burst = async (n: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) statuses.push((await ingest(app.fastify, tenant, body)).statusCode);
    return statuses;
  };
  t.ok((await burst(60)).every((s) => s === 201), '60 writes at 10:00:10');
  clock.advance(70_000);
  const later = await burst(60);
  t.equal(later.filter((s) => s === 201).length, 60, 'at 10:01:20 the next 60 are all admitted: the last 60 s hold none');
  const over = await ingest(app.fastify, tenant, body);
  expectError(t, over, 429, 'RATE_LIMITED', 'the 61st of the new burst');
  t.equal(over.headers['retry-after'], '61', 'until 60 whole seconds have passed after 10:01:20');
  clock.advance(30_500);
  t.equal((await ingest(app.fastify, tenant, body)).statusCode, 429, 'half a minute later still full');
  clock.advance(30_499);
  t.equal((await ingest(app.fastify, tenant, body)).statusCode, 429, 'at 10:02:20.999 still full');
  clock.advance(1);
  t.equal((await ingest(app.fastify, tenant, body)).statusCode, 201, 'at 10:02:21 the burst has left the window');
});

t.test("write tier across instances whose clocks differ: the writes of one ahead by 10 s are counted by the other", async (t) => {
  const behind = new TestClock(new Date('2026-04-08T10:00:00.000Z'));
  const ahead = new TestClock(new Date('2026-04-08T10:00:10.000Z'));
  const a = await startTestApp({ clock: behind, env: { WRITE_RATE_LIMIT_PER_MINUTE: '20' } });
  t.teardown(() => a.close());
  const b = await startTestApp({ clock: ahead, dataDir: a.dataDir, env: { WRITE_RATE_LIMIT_PER_MINUTE: '20' } });
  t.teardown(() => b.close());
  const tenant = await createTenant(a.services);
  await settle(b.services);
  const body = { ...UNACTIONABLE, runExtraction: false };
  for (let i = 0; i < 20; i++) t.equal((await ingest(b.fastify, tenant, body)).statusCode, 201, `write ${i + 1} on the instance ahead`);
  const refused = await ingest(a.fastify, tenant, body);
  expectError(t, refused, 429, 'RATE_LIMITED', 'the instance behind counts them: the tier is full');
  t.equal(refused.headers['retry-after'], '71', 'until they leave its own window');
});

t.test('write tier holds across two instances sharing one store, under concurrency (counters committed in batches)', async (t) => {
  const clock = new TestClock(new Date('2026-04-07T10:00:00.000Z'));
  const a = await startTestApp({ clock, env: { WRITE_RATE_LIMIT_PER_MINUTE: '30' } });
  t.teardown(() => a.close());
  const b = await startTestApp({ clock, dataDir: a.dataDir, env: { WRITE_RATE_LIMIT_PER_MINUTE: '30' } });
  t.teardown(() => b.close());
  const tenant = await createTenant(a.services);
  await settle(b.services);
  const body = { ...UNACTIONABLE, runExtraction: false };
  // Each instance's increments of one loop turn share one counter commit; both instances share the file.
  const responses = await Promise.all(Array.from({ length: 80 }, (_, i) => ingest(i % 2 ? b.fastify : a.fastify, tenant, body)));
  t.equal(responses.filter((r) => r.statusCode === 201).length, 30, 'exactly the tier is accepted');
  t.equal(responses.filter((r) => r.statusCode === 429).length, 50, 'the rest refused');
  expectError(t, (await ingest(b.fastify, tenant, body)), 429, 'RATE_LIMITED', 'still full afterwards: refused requests gave their count back, accepted ones did not');
});

t.test('daily extraction cap: over it, the message is stored without extraction', async (t) => {
  const clock = new TestClock(new Date('2026-04-07T10:00:00.000Z'));
  const app = await startTestApp({ clock, env: { WRITE_RATE_LIMIT_PER_MINUTE: '100000' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  await changeSiteSettings(app.services, { siteId: tenant.siteId, changes: { dailyExtractionCap: 3 } });
  await settle(app.services);
  t.equal((await ingest(app.fastify, tenant, { ...PITCH, runExtraction: false })).json().entrySource, 'direct_inbound_external', 'runExtraction false does not use the cap');
  const sources: string[] = [];
  for (let i = 0; i < 3; i++) sources.push((await ingest(app.fastify, tenant, PITCH)).json().entrySource);
  t.same(sources, ['forwarded_actionable', 'forwarded_actionable', 'forwarded_actionable'], 'extractions 1 to 3 (the cap) run');
  const over = await ingest(app.fastify, tenant, PITCH);
  t.equal(over.statusCode, 201, 'the 4th is still ingested');
  t.equal(over.json().entrySource, 'direct_inbound_external', 'without extraction');
  clock.advance(24 * 60 * 60 * 1000);
  t.equal((await ingest(app.fastify, tenant, PITCH)).json().entrySource, 'forwarded_actionable', 'the next UTC day extracts again');
});
