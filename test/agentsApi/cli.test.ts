import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { outreach } from '../helpers/cli.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'agents-cli-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { DATA_DIR: dataDir, AI_CREDITS_ENFORCED: 'true' };
const cli = (...args: string[]) => outreach(['--json', ...args], env);

t.test('agents set|list|run|runs and credits grant|show, through the same commands as the API', async (t) => {
  const team = (await cli('team', 'create', '--name', 'T', '--owner-email', 'o@example.test')).json<{ teamId: string }>();
  const site = (await cli('site', 'create', '--team', team.teamId, '--domain', 'example.test', '--plan', 'pro')).json<{ siteId: string }>();

  const set = await cli('agents', 'set', '--site', site.siteId, '--key', 'article_boost', '--active', 'true', '--cadence-hours', '12');
  t.equal(set.code, 0, set.stderr);
  const listed = (await cli('agents', 'list', '--site', site.siteId)).json<{ agents: Array<{ agentKey: string; isActive: boolean; cadenceHours: number | null; planAllows: boolean }> }>();
  t.match(listed.agents.find((a) => a.agentKey === 'article_boost'), { isActive: true, cadenceHours: 12, planAllows: true });
  t.match(listed.agents.find((a) => a.agentKey === 'outreach'), { isActive: false, planAllows: false });

  const outreachOnPro = await cli('agents', 'set', '--site', site.siteId, '--key', 'outreach', '--active', 'true');
  t.equal(outreachOnPro.code, 1);
  t.match(outreachOnPro.json<{ error: string }>().error, /Advanced/);
  const unknown = await cli('agents', 'set', '--site', site.siteId, '--key', 'article_boost', '--setting', 'colour=red');
  t.equal(unknown.code, 1);
  t.match(unknown.json<{ error: string }>().error, /no setting "colour"/);

  // Option values are refused in the CLI's own words, one line, no stack; nothing is recorded.
  const refused = await Promise.all([
    cli('agents', 'set', '--site', site.siteId, '--key', 'article_boost', '--cadence-hours', '0'),
    cli('agents', 'set', '--site', site.siteId, '--key', 'article_boost', '--cadence-hours', '169'),
    cli('agents', 'set', '--site', site.siteId, '--key', 'article_boost', '--active', 'maybe'),
  ]);
  t.match(refused[0].stderr, /--cadence-hours must be a whole number from 1 to 168, or "none"/);
  t.notMatch(refused[0].stderr, /body\./, 'not the REST body path');
  t.match(refused[1].stderr, /--cadence-hours must be a whole number from 1 to 168/);
  t.match(refused[2].stderr, /--active must be true or false/);
  for (const r of refused) {
    t.not(r.code, 0);
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
  const after = (await cli('agents', 'list', '--site', site.siteId)).json<{ agents: Array<{ agentKey: string; isActive: boolean; cadenceHours: number | null }> }>();
  t.match(after.agents.find((a) => a.agentKey === 'article_boost'), { isActive: true, cadenceHours: 12 });
  t.equal((await cli('agents', 'set', '--site', site.siteId, '--key', 'article_boost', '--cadence-hours', 'none')).code, 0);
  t.notMatch((await outreach(['agents', 'set', '--help'], env)).stdout, /default: \{\}/, 'no "{}" default in the help');

  const broke = await cli('agents', 'run', '--site', site.siteId, '--key', 'article_boost');
  t.equal(broke.code, 1, 'no credits while enforced');
  t.match(broke.json<{ error: string }>().error, /credit balance is 0/);
  t.match((await cli('credits', 'grant', '--team', team.teamId, '--amount', '25', '--note', 'trial')).json(), { granted: 25, balance: 25 });
  t.match((await cli('credits', 'show', '--team', team.teamId)).json(), { granted: 25, debited: 0, balance: 25, enforced: true });
  t.equal((await cli('credits', 'grant', '--team', team.teamId, '--amount', '-3')).code, 1, 'a grant is positive');
  const [hex, exponent] = await Promise.all([
    cli('credits', 'grant', '--team', team.teamId, '--amount', '0x10'),
    cli('credits', 'grant', '--team', team.teamId, '--amount', '1e3'),
  ]);
  t.same([hex.code, exponent.code], [1, 1], 'amounts are decimal digits: 0x10 and 1e3 are refused, not read as 16 and 1000');
  t.match((await cli('credits', 'show', '--team', team.teamId)).json(), { balance: 25 }, 'nothing granted by them');

  const run = await cli('agents', 'run', '--site', site.siteId, '--key', 'article_boost');
  t.equal(run.code, 0, run.stderr);
  const runId = run.json<{ run: { id: string; status: string } }>().run.id;
  const runs = (await cli('agents', 'runs', '--site', site.siteId, '--key', 'article_boost')).json<{ runs: Array<{ id: string; status: string; trigger: string }> }>();
  t.same(runs.runs.map((r) => [r.id, r.status, r.trigger]), [[runId, 'queued', 'on_demand']]);
});
