import t from 'tap';
import { changeSiteSettings, revokeApiKey } from '../../src/commands/tenancy.ts';
import { cachedApiKeyResolver, cachedSiteLoader, CREDENTIAL_CACHE_TTL_MS } from '../../src/http/credentialCache.ts';
import { apiKeyResolver } from '../../src/http/credentials.ts';
import { getSite } from '../../src/readModels/sites.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { keyWith, settle } from '../helpers/http.ts';

const app = await startTestApp();
t.teardown(() => app.close());
const { services } = app;
const tenant = await createTenant(services);

t.test('an API key is resolved once while the key read models are unchanged, and again at once when they change', async (t) => {
  let now = Date.parse('2026-01-15T12:00:00Z');
  let resolved = 0;
  const inner = apiKeyResolver(services, () => {});
  const counting = { accepts: inner.accepts, resolve: (token: string) => (resolved++, inner.resolve(token)) };
  const resolver = cachedApiKeyResolver(counting, services.readModels, () => now);
  const key = await keyWith(services, tenant.teamId, ['inbox:write']);
  const other = await keyWith(services, tenant.teamId, ['inbox:write']);

  const first = await resolver.resolve(key.key);
  t.equal(first?.id, key.id);
  t.equal((await resolver.resolve(key.key))?.id, key.id);
  t.equal(resolved, 1, 'the second request used the remembered credential');
  t.ok(Object.isFrozen(first), 'a shared credential is frozen');

  now += CREDENTIAL_CACHE_TTL_MS;
  await resolver.resolve(key.key);
  t.equal(resolved, 2, 'resolved again after the time-to-live (so its use is still recorded)');

  const { position } = await revokeApiKey(services, { apiKeyId: key.id });
  t.ok(await services.projections.waitFor(position!, 5_000));
  t.equal(await resolver.resolve(key.key), null, 'revoked: refused as soon as the read model has it');
  t.equal((await resolver.resolve(other.key))?.id, other.id, 'the other key still works');
  t.equal(await resolver.resolve('svc_' + '0'.repeat(64)), null, 'an unknown key is refused');
  const before = resolved;
  t.equal(await resolver.resolve(key.key), null);
  t.equal(resolved, before + 1, 'refusals are not remembered');
});

t.test('a site is read once while the sites read model is unchanged; a settings change is seen on the next request', async (t) => {
  let reads = 0;
  const load = cachedSiteLoader((id) => (reads++, getSite(services.readModels, id)), services.readModels);
  const site = await load(tenant.siteId);
  t.equal((await load(tenant.siteId))?.id, tenant.siteId);
  t.equal(reads, 1);
  t.ok(Object.isFrozen(site), 'the shared document is frozen');
  t.throws(() => {
    (site as { plan: string }).plan = 'starter';
  }, TypeError);
  await changeSiteSettings(services, { siteId: tenant.siteId, changes: { dailyIngestionCap: 7 } });
  await settle(services);
  t.equal((await load(tenant.siteId))?.dailyIngestionCap, 7, 'the change is served at once');
  t.equal(reads, 2);
  t.equal(await load('01ARZ3NDEKTSV4RRFFQ69G5FAV'), null, 'an unknown site');
});
