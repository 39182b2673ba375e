import t from 'tap';
import { startTestApp } from '../helpers/testApp.ts';

t.test('/readyz stays ready while projections are a little behind, and reports 503 past READY_MAX_LAG_EVENTS', async (t) => {
  const app = await startTestApp({ env: { READY_MAX_LAG_EVENTS: '5' } });
  t.teardown(() => app.close());
  const readyz = () => app.fastify.inject({ method: 'GET', url: '/readyz' });
  await app.services.projections.stop();
  const append = (n: number) =>
    app.services.events.append(`site-ready-${n}`, [{ type: 'SiteSettingsChanged', data: { siteId: `ready-${n}`, changes: {}, changedAt: '2026-01-01T00:00:00.000Z' } }], 'any');
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
