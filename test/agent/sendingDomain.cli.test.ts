import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import type { SiteDoc } from '../../src/readModels/sites.ts';
import { createServices } from '../../src/services.ts';
import { outreach } from '../helpers/cli.ts';
import { startDnsResponder } from '../helpers/dnsResponder.ts';

// Each CLI run is a fresh Node process: allow for busy machines.
t.setTimeout(300_000);

t.test('outreach site verify-domain: the record to publish, a failed --check, then verified', async (t) => {
  const dns = await startDnsResponder();
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-verify-domain-'));
  t.teardown(async () => {
    await dns.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const env = { DATA_DIR: dataDir, DNS_SERVERS: dns.server };
  const cli = (...args: string[]) => outreach(['--json', ...args], env);

  const { teamId } = (await cli('team', 'create', '--name', 'Acme', '--owner-email', 'owner@acme.test')).json<{ teamId: string }>();
  const { siteId } = (await cli('site', 'create', '--team', teamId, '--domain', 'acme.test')).json<{ siteId: string }>();

  const first = await cli('site', 'verify-domain', siteId);
  t.equal(first.code, 0, first.stderr);
  const record = first.json<{ recordName: string; recordValue: string }>();
  t.match(record, { siteId, domain: 'acme.test', recordName: '_outreach-verification.acme.test', recordValue: /^outreach-verification=[0-9a-f]{32}$/, issued: true });

  const human = await outreach(['site', 'verify-domain', siteId], env);
  t.equal(human.code, 0, human.stderr);
  t.match(human.stdout, `name:  _outreach-verification.acme.test`);
  t.match(human.stdout, `value: ${record.recordValue}`, 'the same outstanding record is shown again');

  const missing = await cli('site', 'verify-domain', siteId, '--check');
  t.equal(missing.code, 1, 'a failed check exits non-zero');
  t.same(missing.json(), { siteId, domain: 'acme.test', verified: false, reason: 'record_missing' });

  dns.txt.set(record.recordName, [[record.recordValue]]);
  const ok = await outreach(['site', 'verify-domain', siteId, '--check'], env);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, 'sending domain acme.test verified');
  t.same(dns.queries, ['_outreach-verification.acme.test', '_outreach-verification.acme.test']);

  const services = await createServices(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
  t.teardown(() => services.close());
  await services.projections.catchUp();
  t.equal((await services.readModels.get<SiteDoc>('sites', siteId))?.sendingDomainVerified, true, "the site's sendingDomainVerified is true");
});

t.test('outreach site verify-domain on an unknown site prints the error', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-verify-domain-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const r = await outreach(['--json', 'site', 'verify-domain', 'NOPE', '--check'], { DATA_DIR: dataDir });
  t.equal(r.code, 1);
  t.same(r.json(), { error: 'site NOPE not found' });
});
