import t from 'tap';
import { bearer, createTenant, startTestApp } from './helpers/testApp.ts';

t.test('a new tenant creates and lists a subscription', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const created = await app.fastify.inject({
    method: 'POST',
    url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks`,
    headers: bearer(tenant.key),
    payload: { label: 'crm', url: 'https://example.com/hook', eventTypes: ['outreach.reply_sent'] },
  });
  t.equal(created.statusCode, 201);
  const list = await app.fastify.inject({ method: 'GET', url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks`, headers: bearer(tenant.key) });
  t.equal(list.json().subscriptions.length, 1);
});
