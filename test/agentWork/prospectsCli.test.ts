import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadProspects } from '../../src/commands/prospects.ts';
import { createSite, createTeam } from '../../src/commands/tenancy.ts';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';
import { outreach } from '../helpers/cli.ts';

t.setTimeout(120_000);
const dataDir = mkdtempSync(join(tmpdir(), 'outreach-cli-prospects-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { DATA_DIR: dataDir };
const config = loadConfig(env);
const setup = await createServices(config);
const { teamId } = await createTeam(setup, { name: 'Brew', ownerEmail: 'owner@brew.test' });
const { siteId } = await createSite(setup, { teamId, domain: 'brewathome.example', plan: 'advanced' }, config.MAIL_DOMAIN);
const starter = await createSite(setup, { teamId, domain: 'starter.example', plan: 'starter' }, config.MAIL_DOMAIN);
await setup.close();

t.test('outreach prospects import --site --file', async (t) => {
  const file = join(dataDir, 'prospects.csv');
  writeFileSync(file, 'url,name,notes\nhttps://roastweekly.example,Roast Weekly,espresso reviews\nbeanblog.example,,\n');
  const ok = await outreach(['--json', 'prospects', 'import', '--site', siteId, '--file', file], env);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.json(), { siteId, imported: 2, unchanged: 0 });
  const text = await outreach(['prospects', 'import', '--site', siteId, '--file', file], env);
  t.match(text.stdout, /0 prospects imported for brewathome\.example, 2 already known unchanged/);

  const bad = join(dataDir, 'bad.csv');
  writeFileSync(bad, 'url\nhttp://plain.example\n');
  const refused = await outreach(['--json', 'prospects', 'import', '--site', siteId, '--file', bad], env);
  t.equal(refused.code, 1);
  t.match(refused.json(), { error: /line 2: "http:\/\/plain\.example" is not an https URL/ });
  const noSite = await outreach(['--json', 'prospects', 'import', '--site', 'nope', '--file', file], env);
  t.equal(noSite.code, 1);
  t.match(noSite.json(), { error: 'site nope not found' });
  const starterSite = await outreach(['--json', 'prospects', 'import', '--site', starter.siteId, '--file', file], env);
  t.equal(starterSite.code, 1, 'a site without the Outreach Agent in its plan is refused, as over REST');
  t.match(starterSite.json(), { error: /starter plan; the Outreach Agent needs the Advanced plan/ });
  const missing = await outreach(['--json', 'prospects', 'import', '--site', siteId, '--file', join(dataDir, 'none.csv')], env);
  t.match(missing.json(), { error: /cannot read .*none\.csv: ENOENT/ });

  const services = await createServices(config);
  t.teardown(() => services.close());
  const state = await loadProspects(services, siteId);
  t.same([...state.prospects.keys()], ['https://roastweekly.example', 'https://beanblog.example']);
});
