import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteReadModelStore } from '../../src/adapters/sqlite/sqliteReadModelStore.ts';
import { createSubscription, deleteSubscription } from '../../src/commands/webhookSubscriptions.ts';
import type { AttemptOutcome } from '../../src/domain/webhookDelivery.ts';
import { DeliveryLedger } from '../../src/processors/webhookDelivery/deliveryLedger.ts';
import type { ReadModelStore } from '../../src/ports/readModelStore.ts';
import { allProjections } from '../../src/projections/index.ts';
import type { Projection } from '../../src/projections/projection.ts';
import { ProjectionRunner } from '../../src/projections/projectionRunner.ts';
import type { Services } from '../../src/services.ts';
import { PITCH, UNACTIONABLE, ingest } from '../ingestion/helpers.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';

/** Every document of every projection, in a stable order. */
async function snapshot(store: ReadModelStore) {
  const out: Record<string, unknown[]> = {};
  for (const p of allProjections) for (const c of p.collections) out[c] = await store.find(c, {}, { sortBy: 'id' });
  return out;
}

const retry = { maxRetries: 3, baseMs: 10_000, factor: 6, jitter: 0.2 };

/** Deliveries to one subscription: claims, successes, a retried failure, a final failure. */
async function deliveries(services: Services, subscriptionId: string, prefix: string) {
  const ledger = new DeliveryLedger(services.events, subscriptionId, { checkpoint: () => -1n });
  const at = (n: number) => new Date(Date.UTC(2026, 0, 15, 12, 0, n)).toISOString();
  const outcome = (status: AttemptOutcome['status'], statusCode: number | null): AttemptOutcome => ({ status, statusCode, error: null, durationMs: 12 });
  for (let i = 0; i < 6; i++) {
    const deliveryId = `${prefix}-${i}`;
    await ledger.handle({
      type: 'ScheduleDelivery',
      data: {
        subscriptionId, deliveryId, sourcePosition: String(i), eventType: 'outreach.message_received', webhookId: `outreach.message_received:1:${deliveryId}`,
        body: '{}', scheduledAt: at(i), dueAt: Date.parse(at(i)), workerId: 'w1',
      },
    });
  }
  const record = (deliveryId: string, attempt: number, o: AttemptOutcome, n: number) =>
    ledger.handle({ type: 'RecordAttempt', data: { subscriptionId, deliveryId, attempt, outcome: o, attemptedAt: at(n), workerId: 'w1', retry, random01: 0.5 } });
  await record(`${prefix}-0`, 1, outcome('ok', 204), 10);
  await record(`${prefix}-1`, 1, outcome('http_500', 500), 11);
  await record(`${prefix}-1`, 2, outcome('ok', 200), 12);
  for (let a = 1; a <= 4; a++) await record(`${prefix}-2`, a, outcome('timeout', null), 12 + a);
  await record(`${prefix}-3`, 1, outcome('http_404', 404), 20);
  await ledger.handle({ type: 'AbandonDelivery', data: { subscriptionId, deliveryId: `${prefix}-4`, reason: 'subscription_disabled', abandonedAt: at(21) } });
}

t.test('a bulk rebuild gives the same read models as following the log event by event', async (t) => {
  const app = await startTestApp();
  const dir = mkdtempSync(join(tmpdir(), 'outreach-bulk-'));
  t.teardown(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const { services } = app;
  const tenant = await createTenant(services);
  const input = { teamId: tenant.teamId, siteId: tenant.siteId, label: 'l', url: 'https://example.com/h', createdByOauthClientId: null };
  const kept = await createSubscription(services, { ...input, eventTypes: ['outreach.message_received'] });
  const gone = await createSubscription(services, { ...input, eventTypes: ['outreach.message_received'] });
  for (let i = 0; i < 8; i++) {
    const body = i % 3 === 0 ? { ...UNACTIONABLE, from: `sam${i}@agency.io` } : { ...PITCH, from: `jane${i}@prospect.io`, messageId: `<m${i}@prospect.io>` };
    const res = await ingest(app.fastify, tenant, body);
    t.equal(res.statusCode, 201, `ingestion ${i}`);
  }
  // A reply in the thread of the second message.
  t.equal((await ingest(app.fastify, tenant, { ...PITCH, from: 'jane1@prospect.io', messageId: '<r1@prospect.io>', inReplyTo: '<m1@prospect.io>' })).statusCode, 201);
  await deliveries(services, kept.subscriptionId, 'k');
  await deliveries(services, gone.subscriptionId, 'g');
  await deleteSubscription(services, { siteId: tenant.siteId, subscriptionId: gone.subscriptionId });
  const head = await services.events.headPosition();
  t.ok(await services.projections.waitFor(head, 10_000), 'the service followed the log');
  const followed = await snapshot(services.readModels);
  t.ok(Object.values(followed).some((docs) => docs.length > 0), 'the history made documents');
  t.ok((followed.webhookDeliveries ?? []).length >= 6, 'delivery documents among them');

  const fresh = new SqliteReadModelStore(join(dir, 'rebuilt.sqlite'));
  t.teardown(() => fresh.close());
  const runner = new ProjectionRunner(services.events, fresh, allProjections);
  await runner.init();
  await runner.catchUp();
  t.equal(runner.position, head);
  t.same(await snapshot(fresh), followed, 'every collection equal, document by document');
  for (const p of allProjections) t.same(await fresh.getCheckpoint(p.name), { position: head, version: p.version }, `${p.name} checkpoint at the head`);

  // After the rebuild the projections follow the log as usual, from where the rebuild stopped.
  t.equal((await ingest(app.fastify, tenant, { ...PITCH, from: 'late@prospect.io', messageId: '<late@prospect.io>' })).statusCode, 201);
  await runner.catchUp();
  const newHead = await services.events.headPosition();
  t.ok(await services.projections.waitFor(newHead, 10_000));
  t.same(await snapshot(fresh), await snapshot(services.readModels), 'still equal after following new events');

  // A rebuild of a store with documents (the CLI's rebuild) replaces them with the same documents.
  const report = await runner.rebuild();
  t.equal(report.position, newHead);
  t.same(await snapshot(fresh), await snapshot(services.readModels), 'and after rebuilding over existing documents');
  t.equal(report.events, (await services.events.readAll({ limit: 100_000 })).filter((e) => allProjections.some((p) => p.canHandle(e.type))).length, 'every event a projection handles was folded');

  // A rebuild of one projection reads only the events of its types.
  const one = await runner.rebuild(['webhookSubscriptions']);
  t.same(one.projections, ['webhookSubscriptions']);
  const ofItsTypes = (await services.events.readAll({ limit: 100_000 })).filter((e) => allProjections.find((p) => p.name === 'webhookSubscriptions')!.canHandle(e.type));
  t.equal(one.events, ofItsTypes.length, 'only its events were read');
  t.ok(one.events > 0 && one.events < report.events, 'some events, not all');
  t.same(await snapshot(fresh), await snapshot(services.readModels), 'and the read models are the same after it');
  const reopened = new SqliteReadModelStore(join(dir, 'rebuilt.sqlite'));
  t.teardown(() => reopened.close());
  t.same(await snapshot(reopened), await snapshot(services.readModels), 'the file holds what the cache holds');
});

t.test('a projection that fails on an event holds back neither the rebuild nor the following of the others', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-bulk-fail-'));
  const app = await startTestApp();
  t.teardown(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const { services } = app;
  await createTenant(services);
  const teams = allProjections.find((p) => p.name === 'teams')!;
  const boom: Projection = { name: 'boom', version: 1, collections: ['boom'], canHandle: () => true, handle: async () => Promise.reject(new Error('boom')) };
  const store = new SqliteReadModelStore(join(dir, 'rm.sqlite'));
  t.teardown(() => store.close());
  const runner = new ProjectionRunner(services.events, store, [teams, boom]);
  await runner.init();
  await t.rejects(runner.step(), /boom/, 'the failure is reported');
  const head = await services.events.headPosition();
  t.same(await store.getCheckpoint('teams'), { position: head, version: teams.version }, 'teams was rebuilt');
  t.equal((await store.find('teams', {})).length, 1);
  t.equal(await store.getCheckpoint('boom'), null, 'the failing projection stays unbuilt');
  await createTenant(services);
  const newHead = await services.events.headPosition();
  await t.rejects(runner.step(), /boom/);
  t.same(await store.getCheckpoint('teams'), { position: newHead, version: teams.version }, 'teams follows new events');
  t.equal((await store.find('teams', {})).length, 2);
  t.equal(runner.position, -1n, 'read-your-writes still waits for the failing one');
});
