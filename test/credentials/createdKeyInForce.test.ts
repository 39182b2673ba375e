import t from 'tap';
import { outreach } from '../helpers/cli.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';

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
