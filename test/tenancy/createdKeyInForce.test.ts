import t from 'tap';
import { outreach } from '../helpers/cli.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { createApiKey, revokeApiKey } from '../../src/commands/tenancy.ts';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';

/**
 * A key created by the CLI (another process) while the server runs is accepted on its first use:
 * on an unknown key the server catches its read models up to the store's head before refusing.
 */
t.test('an API key created with `outreach apikey create` works at once against a running server', async (t) => {
  const app = await startTestApp({ listen: true });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const env = { DATA_DIR: app.dataDir };
  for (let i = 0; i < 3; i++) {
    const created = await outreach(['--json', 'apikey', 'create', '--team', tenant.teamId, '--scopes', 'webhooks:read', '--name', `cli-${i}`], env);
    t.equal(created.code, 0, created.stderr);
    const { key } = created.json<{ key: string }>();
    const res = await fetch(`${app.url}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, { headers: { authorization: `Bearer ${key}` } });
    t.equal(res.status, 200, `key ${i}: accepted on its first use`);
  }
  const unknown = await fetch(`${app.url}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, { headers: { authorization: `Bearer svc_${'0'.repeat(64)}` } });
  t.equal(unknown.status, 401, 'an unknown key is still refused');
});

/**
 * The same without process start-up times hiding a lag: a second connection to the same data
 * directory (as another process has) revokes the key, and the very next request is refused. The
 * server's projection loop learns of that append only at its next poll, so this fails without the
 * catch-up before trusting a credential.
 */
t.test('a key revoked through another connection is refused on the very next request', async (t) => {
  const app = await startTestApp({ listen: true });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const other = await createServices(loadConfig({ DATA_DIR: app.dataDir, LOG_LEVEL: 'silent' }));
  t.teardown(() => other.close());
  const url = `${app.url}/api/v1/sites/${tenant.siteId}/outreach/webhooks`;
  for (let i = 0; i < 5; i++) {
    const created = await createApiKey(other, { teamId: tenant.teamId, name: `other-${i}`, scopes: ['webhooks:read'], siteId: null });
    t.equal((await fetch(url, { headers: { authorization: `Bearer ${created.key}` } })).status, 200, `key ${i}: accepted at once`);
    await revokeApiKey(other, { apiKeyId: created.id });
    t.equal((await fetch(url, { headers: { authorization: `Bearer ${created.key}` } })).status, 401, `key ${i}: refused at once`);
  }
});
