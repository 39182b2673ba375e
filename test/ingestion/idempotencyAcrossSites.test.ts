import t from 'tap';
import { changeSiteSettings, createSite } from '../../src/commands/tenancy.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, eventsOfType, inboxUrl } from './helpers.ts';

/**
 * An Idempotency-Key is scoped to the credential, and a replay must be the same request: the same
 * site and the same body. Reuse with another site or body is 409 IDEMPOTENCY_KEY_REUSED, and the
 * site's licence is checked before any replay.
 */
t.test('Idempotency-Key reuse across sites and bodies', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const { services, fastify } = app;
  const tenant = await createTenant(services);
  const siteB = await createSite(services, { teamId: tenant.teamId, domain: 'b.example.test', plan: 'advanced' }, services.config.MAIL_DOMAIN);
  const siteC = await createSite(services, { teamId: tenant.teamId, domain: 'c.example.test', plan: 'advanced' }, services.config.MAIL_DOMAIN);
  await changeSiteSettings(services, { siteId: siteC.siteId, changes: { licensed: false } });
  await services.projections.waitFor(await services.events.headPosition(), 5_000);
  const post = (siteId: string, body: object, key: string) =>
    fastify.inject({ method: 'POST', url: inboxUrl(siteId), headers: { authorization: `Bearer ${tenant.key}`, 'idempotency-key': key }, payload: body });
  const recorded = async () => (await eventsOfType(services, 'IngestionRecorded')).length;

  const first = await post(tenant.siteId, PITCH, 'shared-key');
  t.equal(first.statusCode, 201);
  const before = await recorded();

  const otherSite = await post(siteB.siteId, PITCH, 'shared-key');
  t.equal(otherSite.statusCode, 409, 'another site with the same key is refused, not answered with site A’s result');
  t.equal(otherSite.json().error.code, 'IDEMPOTENCY_KEY_REUSED');
  t.match(otherSite.json().error.message, /different site or request body/);

  const otherBody = await post(tenant.siteId, { ...PITCH, bodyText: `${PITCH.bodyText}\nP.S. another ask` }, 'shared-key');
  t.equal(otherBody.statusCode, 409, 'a different body with the same key is refused');
  t.equal(otherBody.json().error.code, 'IDEMPOTENCY_KEY_REUSED');

  const unlicensed = await post(siteC.siteId, { ...PITCH, runExtraction: false }, 'shared-key');
  t.equal(unlicensed.statusCode, 403, 'an unlicensed site gets 403 before any replay');
  t.equal(unlicensed.json().error.code, 'SITE_NOT_LICENSED');

  t.equal(await recorded(), before, 'nothing was stored by the refused requests');
  const replay = await post(tenant.siteId, PITCH, 'shared-key');
  t.equal(replay.statusCode, 200, 'the same request is still replayed');
  t.same(replay.json(), first.json());

  const fresh = await post(siteB.siteId, PITCH, 'another-key');
  t.equal(fresh.statusCode, 201, 'site B with its own key is ingested');
  t.equal(fresh.json().siteId, siteB.siteId);
});
