import t from 'tap';
import { TestClock, type TestApp, startTestApp } from '../helpers/testApp.ts';

/** An event no credential projection reads (the lag and stall tests; a credential change has its own rule below). */
const appendUnrelated = (app: TestApp, id: string) =>
  app.services.events.append(`subscription-${id}`, [{ type: 'SubscriptionDeleted', data: { subscriptionId: id, siteId: id, deletedAt: '2026-01-01T00:00:00.000Z' } }], 'any');

t.test('/readyz stays ready while projections are a little behind, and reports 503 past READY_MAX_LAG_EVENTS', async (t) => {
  const app = await startTestApp({ env: { READY_MAX_LAG_EVENTS: '5' } });
  t.teardown(() => app.close());
  const readyz = () => app.fastify.inject({ method: 'GET', url: '/readyz' });
  await app.services.projections.stop();
  const append = (n: number) => appendUnrelated(app, `ready-${n}`);
  for (let n = 0; n < 5; n++) await append(n);
  t.equal((await readyz()).statusCode, 200, '5 events behind: ready');
  await append(5);
  const behind = await readyz();
  t.equal(behind.statusCode, 503, '6 events behind: not ready');
  t.equal(behind.json().status, 'not_ready');
  t.match(behind.json().reason, /more than 5 events behind/);
  app.services.projections.start();
  t.ok(await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000));
  t.equal((await readyz()).statusCode, 200, 'ready again once caught up');
});

t.test('/readyz reports 503 when projections stay behind at one position for READY_MAX_STALL_MS, however few events they lag', async (t) => {
  const clock = new TestClock();
  const app = await startTestApp({ clock, env: { READY_MAX_STALL_MS: '30000' } });
  t.teardown(() => app.close());
  const readyz = () => app.fastify.inject({ method: 'GET', url: '/readyz' });
  const append = (n: number) => appendUnrelated(app, `stall-${n}`);
  // Idle and caught up for a long time: a new event is not a stall.
  clock.advance(3_600_000);
  await app.services.projections.stop();
  await append(0);
  t.equal((await readyz()).statusCode, 200, 'one event behind, just now: ready');
  clock.advance(29_000);
  t.equal((await readyz()).statusCode, 200, 'behind at one position for 29 s: ready');
  clock.advance(2_000);
  const stalled = await readyz();
  t.equal(stalled.statusCode, 503, 'for 31 s: not ready');
  t.match(stalled.json().reason, /projections have not moved for 31 s while behind the log/);
  app.services.projections.start();
  t.ok(await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000));
  t.equal((await readyz()).statusCode, 200, 'ready again once caught up');
  // Behind again, but moving between probes: ready.
  await app.services.projections.stop();
  await append(1);
  t.equal((await readyz()).statusCode, 200);
  clock.advance(40_000);
  app.services.projections.start();
  t.ok(await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000));
  await app.services.projections.stop();
  await append(2);
  t.equal((await readyz()).statusCode, 200, 'a new position behind: the stall is timed from now');
});

t.test('/readyz with a store that does not answer: 503 naming the store, the cause in the log only', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const original = app.services.readModels.ping.bind(app.services.readModels);
  // Our own port, not a client library: the driver's error, with an internal host in it.
  app.services.readModels.ping = async () => {
    throw new Error('connect ECONNREFUSED 10.1.2.3:27017');
  };
  t.teardown(() => {
    app.services.readModels.ping = original;
  });
  const res = await app.fastify.inject({ method: 'GET', url: '/readyz' });
  t.equal(res.statusCode, 503);
  t.same(res.json(), { status: 'not_ready', reason: 'read-model store unreachable (the cause is in the service log)' });
  t.notMatch(res.body, /10\.1\.2\.3/, 'no internal address in the answer');
});

t.test('/readyz is 503 while the projections authentication reads have not taken in the last credential change (an authenticated request would get 503)', async (t) => {
  const app = await startTestApp({ env: { CREDENTIAL_CATCH_UP_MS: '200' } });
  t.teardown(() => app.close());
  const readyz = () => app.fastify.inject({ method: 'GET', url: '/readyz' });
  await app.services.projections.stop();
  await app.services.events.append('site-cred-1', [{ type: 'SiteSettingsChanged', data: { siteId: 'cred-1', changes: {}, changedAt: '2026-01-01T00:00:00.000Z' } }], 'any');
  const behind = await readyz();
  t.equal(behind.statusCode, 503, 'one credential change behind: not ready');
  t.same(behind.json(), { status: 'not_ready', reason: 'the projections authentication reads (API keys, OAuth, teams, sites, dashboard sessions) have not taken in the latest credential change yet' });
  app.services.projections.start();
  t.equal((await readyz()).statusCode, 200, 'ready once they take it in (the probe waits for them as a request does)');
});
