import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import {
  addUser,
  changeSiteSettings,
  createApiKey,
  createSite,
  createTeam,
  revokeApiKey,
  setTeamBillingStatus,
} from '../../src/commands/tenancy.ts';
import { createSubscription, deleteSubscription } from '../../src/commands/webhookSubscriptions.ts';
import { loadConfig } from '../../src/config.ts';
import type { RecordedEvent } from '../../src/ports/eventStore.ts';
import type { ProjectionWriter } from '../../src/ports/readModelStore.ts';
import { allProjections } from '../../src/projections/index.ts';
import type { Projection } from '../../src/projections/projection.ts';
import { ProjectionRunner } from '../../src/projections/projectionRunner.ts';
import { webhookSubscriptionsProjection } from '../../src/projections/webhookSubscriptions.ts';
import { subscriptionDocOf } from '../../src/readModels/webhookSubscriptions.ts';
import { type Services, createServices } from '../../src/services.ts';
import { TestClock } from '../helpers/testApp.ts';

const newDir = (t: Test) => {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-proj-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};
const open = (dataDir: string, clock = new TestClock()) => createServices(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { clock });

/** A history touching every projection: creations, updates, a revocation and a deletion. */
async function writeHistory(s: Services, clock: TestClock) {
  const team = await createTeam(s, { name: 'Acme', ownerEmail: 'owner@acme.test' });
  clock.advance(1000);
  await addUser(s, { teamId: team.teamId, email: 'admin@acme.test', role: 'admin' });
  await setTeamBillingStatus(s, { teamId: team.teamId, billingStatus: 'past_due' });
  const site = await createSite(s, { teamId: team.teamId, domain: 'acme.test', plan: 'starter' }, 'inbound.test');
  clock.advance(1000);
  await changeSiteSettings(s, { siteId: site.siteId, changes: { plan: 'advanced', aiCredits: 40 } });
  await changeSiteSettings(s, { siteId: site.siteId, changes: { sendingDomainVerified: true } });
  const key = await createApiKey(s, { teamId: team.teamId, name: 'k', scopes: ['webhooks:read'], siteId: null });
  await revokeApiKey(s, { apiKeyId: key.id });
  await createApiKey(s, { teamId: team.teamId, name: 'k2', scopes: ['webhooks:write'], siteId: site.siteId });
  const input = { teamId: team.teamId, siteId: site.siteId, label: 'l', url: 'https://example.com/h', createdByOauthClientId: null };
  const kept = await createSubscription(s, { ...input, eventTypes: ['outreach.reply_sent'] });
  const gone = await createSubscription(s, { ...input, eventTypes: ['outreach.message_received'] });
  clock.advance(1000);
  await deleteSubscription(s, { siteId: site.siteId, subscriptionId: gone.subscriptionId });
  return { team, site, kept: kept.subscriptionId, gone: gone.subscriptionId };
}

/** Every document of every projection, in a stable order. */
async function snapshot(s: Services, projections: readonly Projection[] = allProjections) {
  const out: Record<string, unknown[]> = {};
  for (const p of projections) for (const c of p.collections) out[c] = await s.readModels.find(c, {}, { sortBy: 'id' });
  return out;
}

async function allEvents(s: Services): Promise<RecordedEvent[]> {
  return s.events.readAll({ limit: 1_000_000 });
}

t.test('idempotent projections: applying the same history again changes no document', async (t) => {
  const dir = newDir(t);
  const clock = new TestClock();
  const s = await open(dir, clock);
  t.teardown(() => s.close());
  const ids = await writeHistory(s, clock);
  await s.projections.catchUp();
  const first = await snapshot(s);
  t.equal(first.teams!.length, 1);
  t.equal(first.users!.length, 2);
  t.match(first.sites, [{ plan: 'advanced', aiCredits: 40, sendingDomainVerified: true, licensed: true }]);
  t.equal(first.apiKeys!.length, 2);
  t.same(first.webhookSubscriptions!.map((d) => (d as { id: string }).id), [ids.kept], 'the deleted subscription is gone');

  const events = await allEvents(s);
  for (let round = 1; round <= 2; round++) {
    for (const p of allProjections) {
      const cp = await s.readModels.getCheckpoint(p.name);
      t.ok(cp, `${p.name} has a checkpoint`);
      const ok = await s.readModels.applyBatch(p.name, p.version, cp!.position, cp!.position, async (writerAt) => {
        for (const e of events) {
          if (!p.canHandle(e.type)) continue;
          // Each event twice in a row, too.
          await p.handle(e, writerAt(e.position));
          await p.handle(e, writerAt(e.position));
        }
      });
      t.ok(ok, `${p.name}: replay batch committed (round ${round})`);
    }
    t.same(await snapshot(s), first, `round ${round}: identical documents after the replay`);
  }
});

t.test('a stale batch (checkpoint moved on) is refused and writes nothing', async (t) => {
  const dir = newDir(t);
  const clock = new TestClock();
  const s = await open(dir, clock);
  t.teardown(() => s.close());
  await writeHistory(s, clock);
  await s.projections.catchUp();
  const before = await snapshot(s);
  const p = webhookSubscriptionsProjection;
  const ok = await s.readModels.applyBatch(p.name, p.version, -1n, 0n, async (writerAt) => {
    await writerAt(0n).put('webhookSubscriptions', { id: 'intruder', label: 'x' });
  });
  t.equal(ok, false);
  t.same(await snapshot(s), before);
});

t.test('a version bump rebuilds that projection (documents re-derived) and leaves the others alone', async (t) => {
  const dir = newDir(t);
  const clock = new TestClock();
  const s = await open(dir, clock);
  t.teardown(() => s.close());
  const ids = await writeHistory(s, clock);
  await s.projections.catchUp();
  const head = await s.events.headPosition();
  const before = await snapshot(s);

  // Version 2 of the subscriptions projection derives one more field.
  const v2: Projection = {
    ...webhookSubscriptionsProjection,
    version: webhookSubscriptionsProjection.version + 1,
    handle: (event, w) =>
      webhookSubscriptionsProjection.handle(event, {
        ...w,
        put: (collection, doc) => w.put(collection, { ...doc, derivedBy: 'v2' }),
      } satisfies ProjectionWriter),
  };
  const projections = allProjections.map((p) => (p.name === v2.name ? v2 : p));
  const runner = new ProjectionRunner(s.events, s.readModels, projections);
  await runner.init();
  // Rebuilt in bulk and switched in at once: until then readers see the documents of version 1.
  t.same(await s.readModels.find('webhookSubscriptions', {}), before.webhookSubscriptions, 'the bumped projection keeps its documents until the switch');
  t.same(await s.readModels.getCheckpoint(v2.name), { position: head, version: webhookSubscriptionsProjection.version }, 'and its checkpoint');
  for (const p of allProjections.filter((p) => p.name !== v2.name)) {
    t.same(await s.readModels.getCheckpoint(p.name), { position: head, version: p.version }, `${p.name} kept its checkpoint`);
  }
  t.equal(runner.position, -1n);
  await runner.catchUp();
  const after = await snapshot(s);
  t.same(after.webhookSubscriptions, (before.webhookSubscriptions as object[]).map((d) => ({ ...d, derivedBy: 'v2' })), 're-derived by v2');
  t.notOk(after.webhookSubscriptions!.some((d) => (d as { id: string }).id === ids.gone), 'the deleted one stays deleted');
  t.same(await s.readModels.getCheckpoint(v2.name), { position: head, version: v2.version });
  for (const c of ['teams', 'users', 'sites', 'apiKeys', 'apiKeysByHash']) t.same(after[c], before[c], `${c} unchanged`);
});

t.test('restart: projections resume from their checkpoints without re-applying, then apply new events', async (t) => {
  const dir = newDir(t);
  const clock = new TestClock();
  const s1 = await open(dir, clock);
  const ids = await writeHistory(s1, clock);
  await s1.projections.catchUp();
  const before = await snapshot(s1);
  const head = await s1.events.headPosition();
  await s1.close();

  const s2 = await open(dir, clock);
  t.teardown(() => s2.close());
  t.same(await snapshot(s2), before, 'documents survive the restart');
  t.equal(s2.projections.position, head, 'the runner starts at the stored checkpoint');

  let handled = 0;
  const counting = allProjections.map((p) => ({ ...p, handle: (e: RecordedEvent, w: ProjectionWriter) => (handled++, p.handle(e, w)) }));
  const runner = new ProjectionRunner(s2.events, s2.readModels, counting);
  await runner.init();
  t.equal(runner.position, head);
  await runner.catchUp();
  t.equal(handled, 0, 'nothing was applied again');
  t.same(await snapshot(s2), before);

  const added = await createSubscription(s2, {
    teamId: ids.team.teamId,
    siteId: ids.site.siteId,
    label: 'after restart',
    url: 'https://example.com/new',
    eventTypes: ['outreach.contact_suppressed'],
    createdByOauthClientId: null,
  });
  await runner.catchUp();
  const fresh = await s2.events.readAll({ after: head });
  t.ok(fresh.length >= 1);
  const expected = fresh.reduce((n, e) => n + allProjections.filter((p) => p.canHandle(e.type)).length, 0);
  t.ok(expected >= 1);
  t.equal(handled, expected, 'only the new events were applied, once per projection that handles them');
  const doc = await s2.readModels.get('webhookSubscriptions', added.subscriptionId);
  t.same(doc, subscriptionDocOf(added.created), 'the read model document equals the 201 subscription');
  t.match(doc, {
    id: added.subscriptionId,
    label: 'after restart',
    url: 'https://example.com/new',
    event_types: ['outreach.contact_suppressed'],
    is_active: true,
    consecutive_failures: 0,
    created_by_oauth_client_id: null,
    last_delivery_at: null,
  });
});

t.test('the read-model document of a new subscription is what create returned', async (t) => {
  const dir = newDir(t);
  const clock = new TestClock();
  const s = await open(dir, clock);
  t.teardown(() => s.close());
  const ids = await writeHistory(s, clock);
  await s.projections.catchUp();
  const doc = await s.readModels.get<{ id: string; created_at: string }>('webhookSubscriptions', ids.kept);
  t.equal(doc?.created_at, new Date(Date.parse('2026-01-15T12:00:00.000Z') + 2000).toISOString(), 'timestamps come from the clock');
});

t.test('replaying an older event alone leaves a document written by a later event as it is', async (t) => {
  const dir = newDir(t);
  const clock = new TestClock();
  const s = await open(dir, clock);
  t.teardown(() => s.close());
  const ids = await writeHistory(s, clock);
  await s.projections.catchUp();
  const attempt = (status: string, attemptedAt: string) => ({
    type: 'DeliveryAttempted',
    data: { subscriptionId: ids.kept, deliveryId: 'D1', attempt: 1, status, statusCode: 500, error: null, durationMs: 3, attemptedAt, nextAttemptAt: null, workerId: 'w' },
  });
  await s.events.append('replay-test', [attempt('http_500', '2026-01-15T13:00:00.000Z')], 'any');
  await s.events.append('replay-test', [attempt('ok', '2026-01-15T14:00:00.000Z')], 'any');
  await s.projections.catchUp();
  const p = webhookSubscriptionsProjection;
  t.ok(p.canHandle('DeliveryAttempted'), 'precondition: the projection follows delivery attempts');
  const before = await s.readModels.get('webhookSubscriptions', ids.kept);
  t.match(before, { last_delivery_status: 'ok', last_delivery_at: '2026-01-15T14:00:00.000Z' });
  const [older] = (await s.events.readStream('replay-test'));
  const cp = (await s.readModels.getCheckpoint(p.name))!;
  t.ok(await s.readModels.applyBatch(p.name, p.version, cp.position, cp.position, async (writerAt) => p.handle(older!, writerAt(older!.position))));
  t.same(await s.readModels.get('webhookSubscriptions', ids.kept), before, 'unchanged');
});

t.test('a runner that finds the log empty reads the stored checkpoints at most once an interval, and still follows another process that moved them', async (t) => {
  const dir = newDir(t);
  const clock = new TestClock();
  const s1 = await open(dir, clock);
  t.teardown(() => s1.close());
  await writeHistory(s1, clock);
  await s1.projections.catchUp();
  const head = await s1.events.headPosition();

  let reads = 0;
  const counted = new Proxy(s1.readModels, {
    get: (target, key) => {
      const value = Reflect.get(target, key) as unknown;
      if (key === 'getCheckpoint') return (name: string) => (reads++, target.getCheckpoint(name));
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  // Another process on the same data (the CLI), opened before anything is timed.
  const other = await open(dir, clock);
  t.teardown(() => other.close());
  // Two seconds, not the default one: the steps below that must fall inside it keep a wide margin on a loaded machine.
  const EVERY = 2_000;
  const runner = new ProjectionRunner(s1.events, counted, allProjections, { refreshIdleEveryMs: EVERY });
  await runner.init();
  t.equal(runner.position, head);
  reads = 0;
  const started = Date.now();
  let steps = 0;
  let advanced = 0;
  while (Date.now() - started < 300) {
    if (await runner.step()) advanced++;
    steps++;
  }
  t.equal(advanced, 0, 'nothing new');
  t.ok(steps >= 20, `${steps} empty steps`);
  // The first empty step reads them (none was read since init); the others within the interval do not.
  t.equal(reads, allProjections.length, `one round of reads for ${steps} empty steps`);

  // The other process resets one projection: seen at the first empty step an interval after the last read.
  await other.readModels.reset(webhookSubscriptionsProjection.name, webhookSubscriptionsProjection.collections);
  t.notOk(await runner.step());
  t.equal(runner.positionOf([webhookSubscriptionsProjection.name]), head, 'not read again within the interval');
  await new Promise((r) => setTimeout(r, EVERY + 50));
  t.notOk(await runner.step());
  t.equal(runner.positionOf([webhookSubscriptionsProjection.name]), -1n, "the other process's reset is followed");
  t.equal(runner.positionOf(allProjections.filter((p) => p !== webhookSubscriptionsProjection).map((p) => p.name)), head, 'the others stay where they are');
});
