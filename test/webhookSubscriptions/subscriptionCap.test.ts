import t from 'tap';
import { expectError, validBody, webhooksPath } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';

t.test('a site holds at most WEBHOOK_MAX_SUBSCRIPTIONS_PER_SITE subscriptions; one more is 409 SUBSCRIPTION_LIMIT_REACHED', async (t) => {
  const app = await startTestApp({ env: { WEBHOOK_MAX_SUBSCRIPTIONS_PER_SITE: '3' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const create = (n: number) =>
    app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: bearer(tenant.key), payload: validBody({ label: `hook ${n}` }) });
  const ids: string[] = [];
  for (let n = 1; n <= 3; n++) {
    const res = await create(n);
    t.equal(res.statusCode, 201, `subscription ${n} created`);
    ids.push(res.json().subscription.id);
  }
  expectError(t, await create(4), 409, 'SUBSCRIPTION_LIMIT_REACHED', 'the fourth');
  const deleted = await app.fastify.inject({ method: 'DELETE', url: `${webhooksPath(tenant.siteId)}/${ids[0]}`, headers: bearer(tenant.key) });
  t.equal(deleted.statusCode, 200, 'one deleted');
  t.equal((await create(5)).statusCode, 201, 'then there is room for another');
});

t.test('concurrent creations on one site: exactly the limit is taken, the rest refused', async (t) => {
  const app = await startTestApp({ env: { WEBHOOK_MAX_SUBSCRIPTIONS_PER_SITE: '3' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, n) =>
      app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: bearer(tenant.key), payload: validBody({ label: `hook ${n}` }) }),
    ),
  );
  t.equal(answers.filter((r) => r.statusCode === 201).length, 3, 'three created');
  for (const r of answers.filter((r) => r.statusCode !== 201)) expectError(t, r, 409, 'SUBSCRIPTION_LIMIT_REACHED', 'the others');
  const listed = await app.fastify.inject({ url: webhooksPath(tenant.siteId), headers: bearer(tenant.key) });
  t.equal(listed.json().subscriptions.length, 3, 'the site holds three');
});
