import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';

t.setTimeout(120_000);

const root = new URL('../../', import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), 'outreach-cli-new-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

const cli = (dataDir: string, ...args: string[]) =>
  spawnSync(process.execPath, ['bin/outreach.js', ...args, '--json'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent', DATA_DIR: dataDir },
    encoding: 'utf8',
  });

t.test('a command that finds no event log says on stderr that it created one; stdout stays one JSON object', async (t) => {
  const dataDir = join(scratch, 'typo');
  const first = cli(dataDir, 'team', 'create', '--name', 'Lost', '--owner-email', 'lost@acme.test');
  t.equal(first.status, 0, first.stderr);
  t.match(JSON.parse(first.stdout), { teamId: String });
  t.match(first.stderr, /^note: .*typo\/events\.sqlite did not exist: a new, empty event log was created there/);
  const second = cli(dataDir, 'team', 'create', '--name', 'Found', '--owner-email', 'found@acme.test');
  t.equal(second.status, 0);
  t.equal(second.stderr, '', 'the log exists now: no note');
});

t.test('a secret.key that does not open: the command fails, and no note claims a new event log', async (t) => {
  const dataDir = join(scratch, 'badkey');
  mkdirSync(dataDir, { mode: 0o700 });
  writeFileSync(join(dataDir, 'secret.key'), 'garbage\n', { mode: 0o600 });
  const r = cli(dataDir, 'team', 'create', '--name', 'Lost', '--owner-email', 'lost@acme.test');
  t.equal(r.status, 1, r.stderr);
  t.match(JSON.parse(r.stdout), { error: /secret/i });
  t.notMatch(r.stderr, /did not exist/, 'no note');
  t.notOk(existsSync(join(dataDir, 'events.sqlite')), 'no event log was created');
});

t.test('agent set with nothing to change is refused, as site set and team set are', async (t) => {
  const dataDir = join(scratch, 'agents');
  const team = JSON.parse(cli(dataDir, 'team', 'create', '--name', 'Acme', '--owner-email', 'owner@acme.test').stdout) as { teamId: string };
  const site = JSON.parse(cli(dataDir, 'site', 'create', '--team', team.teamId, '--domain', 'acme.test').stdout) as { siteId: string };
  const refused = cli(dataDir, 'agent', 'set', '--site', site.siteId, '--key', 'outreach');
  t.equal(refused.status, 1);
  t.match(JSON.parse(refused.stdout), { error: /nothing to change: give --active/ });
  const line = cli(dataDir, 'agent', 'set', '--site', site.siteId, '--key', 'outreach', '--sender-name', 'Ana\nBcc: x@y.example');
  t.equal(line.status, 1);
  t.match(JSON.parse(line.stdout), { error: /--sender-name must be one line of text/ });
  t.equal(cli(dataDir, 'agent', 'set', '--site', site.siteId, '--key', 'outreach', '--sender-name', 'Ana', '--signature', 'Ana\nAcme').status, 0, 'a signature of two lines');
});

t.test('events read of a stream nothing is recorded under is an error, not an empty stream', async (t) => {
  const dataDir = join(scratch, 'agents');
  const unknown = cli(dataDir, 'events', 'read', 'nope-stream');
  t.equal(unknown.status, 1);
  t.match(JSON.parse(unknown.stdout), { error: /no stream "nope-stream": nothing is recorded under that name/ });
});

t.test("the auditor's commands on a DATA_DIR with no event log: an error, and nothing is created there", async (t) => {
  const dataDir = join(scratch, 'mistyped');
  for (const args of [['events', 'tail', '--no-follow'], ['events', 'read', 'team-x']]) {
    const r = cli(dataDir, ...args);
    t.equal(r.status, 1, args.join(' '));
    t.match(JSON.parse(r.stdout), { error: /no event log at .*mistyped\/events\.sqlite .*nothing to read, and none was created/ }, args.join(' '));
  }
  t.notOk(existsSync(dataDir), 'no directory, log, read models or key made');
});

t.test('a command refused for its own arguments creates nothing in a DATA_DIR that has no store yet', async (t) => {
  const dataDir = join(scratch, 'refused');
  const refusals: Array<[string[], RegExp]> = [
    [['team', 'create', '--name', 'Acme', '--owner-email', 'not-an-address'], /not an email address: not-an-address/],
    [['team', 'create', '--name', ' ', '--owner-email', 'owner@acme.test'], /the team name must be 1 to 120 characters/],
    [['team', 'create', '--name', 'Acme', '--owner-email', 'owner@acme.test', '--owner-password', 'short'], /at least 8 characters/],
    [['team', 'set', '--team', 'T1'], /nothing to change: give --billing/],
    [['team', 'add-user', '--team', 'T1', '--email', 'nobody'], /not an email address/],
    [['team', 'set-password', '--team', 'T1', '--user', 'a@acme.test', '--password', 'short'], /at least 8 characters/],
    [['team', 'set-password', '--team', 'T1', '--user', 'a@acme.test'], /give --password/],
    [['site', 'set', '--site', 'S1'], /nothing to change: give --plan/],
    [['apikey', 'create', '--team', 'T1', '--scopes', 'inbox:write', '--name', ' '], /the key name must be 1 to 120 characters/],
    [['agent', 'set', '--site', 'S1', '--key', 'outreach'], /nothing to change: give --active/],
    [['agent', 'set', '--site', 'S1', '--key', 'outreach', '--sender-name', 'Ana\nBcc: x@y.example'], /--sender-name must be one line of text/],
    [['agents', 'runs', '--site', 'S1', '--limit', '0'], /--limit must be a whole number from 1 to 100/],
    [['credits', 'grant', '--team', 'T1', '--amount', '-5'], /--amount must be a whole number from 1/],
    [['prospects', 'import', '--site', 'S1', '--file', join(scratch, 'no-such.csv')], /cannot read .*no-such\.csv: ENOENT/],
  ];
  for (const [args, message] of refusals) {
    const r = cli(dataDir, ...args);
    t.equal(r.status, 1, args.join(' '));
    t.match(JSON.parse(r.stdout.trim().split('\n').pop()!), { error: message }, args.join(' '));
    t.notMatch(r.stderr, /did not exist/, `${args.join(' ')}: no note of a new log`);
  }
  t.notOk(existsSync(dataDir), 'no directory, log, read models or key made');
});
