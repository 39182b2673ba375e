import t from 'tap';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { expectError } from '../helpers/http.ts';

/**
 * A list filter with a typo (`?staus=open`) would otherwise return the whole unfiltered list as if it
 * were filtered: every list route refuses a query parameter it does not know, naming it.
 */
t.test('every list route refuses an unknown query parameter with 400 VALIDATION_ERROR naming it', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const site = `/api/v1/sites/${tenant.siteId}`;
  const lists = [
    [`${site}/outreach/conversations`, 'staus=open'],
    [`${site}/outreach/opportunities`, 'entrysource=direct_inbound_external'],
    [`${site}/outreach/suppressions`, 'email=a@b.c'],
    [`${site}/articles`, 'changedSince=2026-01-01T00:00:00Z'],
    [`${site}/agents/runs`, 'agent=outreach'],
  ] as const;
  // Lists that are not paged take no parameter at all: a limit is not quietly ignored.
  const unpaged = [`${site}/agents`, `${site}/outreach/webhooks`];
  for (const [path, query] of [...lists, ...unpaged.map((path) => [path, 'limit=5'] as const)]) {
    const knownQuery = unpaged.includes(path) ? '' : 'limit=5&';
    const known = await app.fastify.inject({ url: `${path}?${knownQuery}`, headers: bearer(tenant.key) });
    t.equal(known.statusCode, 200, `${path}: known parameters are accepted`);
    const res = await app.fastify.inject({ url: `${path}?${knownQuery}${query}`, headers: bearer(tenant.key) });
    expectError(t, res, 400, 'VALIDATION_ERROR', `${path}?${query}`);
    t.match(res.json().error.message, `"${query.split('=')[0]}"`, 'the message names the unknown parameter');
  }
});
