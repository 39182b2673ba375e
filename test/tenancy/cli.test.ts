import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import { outreach, type EventLine } from '../helpers/cli.ts';

// Each CLI run is a fresh Node process (about 1 s on an idle machine): allow for busy CI machines.
t.setTimeout(300_000);

const dataDir = mkdtempSync(join(tmpdir(), 'outreach-cli-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { DATA_DIR: dataDir, MAIL_DOMAIN: 'inbound.example.test' };
const cli = (...args: string[]) => outreach(['--json', ...args], env);

// Checks read the event file in-process (fewer process spawns keep the suite fast); `events read` itself is tested below.
let store: SqliteEventStore | null = null;
t.teardown(() => store?.close());
const streamEvents = async (stream: string): Promise<EventLine[]> => {
  store ??= new SqliteEventStore(join(dataDir, 'events.sqlite'));
  return (await store.readStream(stream)).map((e) => ({
    type: e.type,
    position: e.position.toString(),
    time: e.createdAt.toISOString(),
    data: e.data as Record<string, unknown>,
    metadata: e.metadata as Record<string, unknown>,
    stream: e.streamId,
  }));
};

let teamId = '';
let siteId = '';

t.test('team create prints {teamId, ownerUserId}', async (t) => {
  const r = await cli('team', 'create', '--name', 'Acme', '--owner-email', 'Owner@Acme.test', '--owner-password', 'correct horse battery');
  t.equal(r.code, 0, r.stderr);
  const out = r.json<{ teamId: string; ownerUserId: string }>();
  t.same(Object.keys(out).sort(), ['ownerUserId', 'teamId']);
  t.match(out.teamId, /^[0-9A-Z]{26}$/);
  t.match(out.ownerUserId, /^[0-9A-Z]{26}$/);
  teamId = out.teamId;
  const events = await streamEvents(`team-${teamId}`);
  t.same(events.map((e) => e.type), ['TeamCreated', 'UserAdded']);
  const owner = events[1]!.data as { email: string; role: string; passwordHash: string };
  t.equal(owner.email, 'owner@acme.test', 'email normalised');
  t.equal(owner.role, 'owner');
  t.match(owner.passwordHash, /^scrypt\$/, 'password stored as an scrypt hash');
  t.notOk(JSON.stringify(events).includes('correct horse'), 'the password is not in the events');
});

t.test('team set --billing past_due records the status (--json after the subcommand works too)', async (t) => {
  const r = await outreach(['team', 'set', '--team', teamId, '--billing', 'past_due', '--json'], env);
  t.equal(r.code, 0, r.stderr);
  t.match(r.json(), { teamId, billing: 'past_due' });
  const events = await streamEvents(`team-${teamId}`);
  t.match(events.at(-1), { type: 'TeamBillingStatusChanged', data: { billingStatus: 'past_due' } });
});

t.test('team add-user takes the password from OUTREACH_USER_PASSWORD (out of shell history and ps)', async (t) => {
  const r = await outreach(['--json', 'team', 'add-user', '--team', teamId, '--email', 'admin@acme.test', '--role', 'admin'], { ...env, OUTREACH_USER_PASSWORD: 'another long passphrase' });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, /the password is taken from OUTREACH_USER_PASSWORD/, 'says where it came from');
  const added = (await streamEvents(`team-${teamId}`)).find((e) => e.type === 'UserAdded' && e.data.email === 'admin@acme.test')!;
  t.match(added.data, { role: 'admin', passwordHash: /^scrypt\$/ });
});

t.test('team create takes the owner password from OUTREACH_OWNER_PASSWORD and says so (a variable left exported gives every new owner the same password)', async (t) => {
  const r = await outreach(['--json', 'team', 'create', '--name', 'Env', '--owner-email', 'env-owner@env.test'], { ...env, OUTREACH_OWNER_PASSWORD: 'an exported long passphrase' });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, /the password is taken from OUTREACH_OWNER_PASSWORD/);
  const { teamId: created } = r.json<{ teamId: string }>();
  const owner = (await streamEvents(`team-${created}`)).find((e) => e.type === 'UserAdded')!;
  t.match(owner.data, { role: 'owner', passwordHash: /^scrypt\$/ });
  const given = await outreach(['--json', 'team', 'create', '--name', 'Opt', '--owner-email', 'opt-owner@env.test', '--owner-password', 'an option long passphrase'], { ...env, OUTREACH_OWNER_PASSWORD: 'an exported long passphrase' });
  t.equal(given.code, 0, given.stderr);
  t.notMatch(given.stderr, /OUTREACH_OWNER_PASSWORD/, 'the option wins, silently');
});

t.test('team users lists the team; set-role, set-password and remove-user name a user by id or email', async (t) => {
  const listed = await cli('team', 'users', '--team', teamId);
  t.equal(listed.code, 0, listed.stderr);
  const { users } = listed.json<{ users: { userId: string; email: string; role: string; dashboardSignIn: boolean }[] }>();
  t.same(users.map((u) => [u.email, u.role, u.dashboardSignIn]), [['owner@acme.test', 'owner', true], ['admin@acme.test', 'admin', true]]);
  const ownerId = users[0]!.userId;

  const last = await cli('team', 'remove-user', '--team', teamId, '--user', 'Owner@Acme.test');
  t.equal(last.code, 1);
  t.match(last.json(), { error: "the team's last owner cannot be removed: make another user owner first" }, 'one line, no stack');
  const unknown = await cli('team', 'set-role', '--team', teamId, '--user', 'nobody@acme.test', '--role', 'member');
  t.match(unknown.json(), { error: `no user nobody@acme.test in team ${teamId}` });

  const role = await cli('team', 'set-role', '--team', teamId, '--user', 'admin@acme.test', '--role', 'owner');
  t.equal(role.code, 0, role.stderr);
  t.match(role.json(), { role: 'owner', changed: true });
  const password = await outreach(['--json', 'team', 'set-password', '--team', teamId, '--user', ownerId], { ...env, OUTREACH_USER_PASSWORD: 'a third long passphrase' });
  t.equal(password.code, 0, password.stderr);
  t.match(password.stderr, /taken from OUTREACH_USER_PASSWORD/);
  t.match(password.json(), { userId: ownerId, dashboardSignIn: true, sessionsEnded: 0 });
  const log = await cli('events', 'read', `team-${teamId}`);
  const changedLine = log.lines<EventLine>().find((e) => e.type === 'UserPasswordChanged');
  t.equal(changedLine?.data.passwordHash, '[redacted]', '`events read` redacts the new hash');
  const neither = await cli('team', 'set-password', '--team', teamId, '--user', ownerId);
  t.match(neither.json(), { error: /give --password/ }, 'no password given: refused, not taken away');
  const removed = await cli('team', 'remove-user', '--team', teamId, '--user', users[1]!.userId);
  t.equal(removed.code, 0, removed.stderr);
  t.match(removed.json(), { userId: users[1]!.userId, removed: true }, 'one of two owners may go');
  const again = await cli('team', 'remove-user', '--team', teamId, '--user', 'admin@acme.test');
  t.equal(again.code, 0, again.stderr);
  t.same(again.json(), { teamId, userId: users[1]!.userId, removed: true, alreadyRemoved: true }, 'run again: the sweep runs again, nothing is recorded twice');

  const events = (await streamEvents(`team-${teamId}`)).slice(-3);
  t.same(events.map((e) => e.type), ['UserRoleChanged', 'UserPasswordChanged', 'UserRemoved']);
  for (const e of events) t.match(e.metadata, { actor: 'cli', actorKind: 'operator' });
  t.notOk(JSON.stringify(events).includes('third long'), 'the password is not in the events');
  t.match((await streamEvents(`user_email-${createHash('sha256').update('admin@acme.test').digest('hex')}`)).at(-1), { type: 'UserEmailReleased' }, 'the address is free again');
  const after = await cli('team', 'users', '--team', teamId);
  t.same(after.json<{ users: { email: string; role: string }[] }>().users.map((u) => [u.email, u.role]), [['owner@acme.test', 'owner']]);
});

t.test('team add-user without a password says the user has no dashboard sign-in', async (t) => {
  const r = await cli('team', 'add-user', '--team', teamId, '--email', 'api-only@acme.test', '--role', 'member');
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, /no password given: the user has no dashboard sign-in until `outreach team set-password`/);
  t.match(r.json(), { userId: /^[0-9A-Z]{26}$/ });
});

t.test('site create prints {siteId, forwardingAddress} with forward+<token>@<MAIL_DOMAIN>', async (t) => {
  const [r, second] = await Promise.all([
    cli('site', 'create', '--team', teamId, '--domain', 'Acme.test', '--plan', 'pro'),
    cli('site', 'create', '--team', teamId, '--domain', 'b.test'),
  ]);
  t.equal(r.code, 0, r.stderr);
  const out = r.json<{ siteId: string; forwardingAddress: string }>();
  t.same(Object.keys(out).sort(), ['forwardingAddress', 'siteId']);
  t.match(out.forwardingAddress, /^forward\+[0-9a-z]{16,}@inbound\.example\.test$/);
  siteId = out.siteId;
  const [created] = await streamEvents(`site-${siteId}`);
  t.match(created, { type: 'SiteCreated', data: { teamId, domain: 'acme.test', plan: 'pro', licensed: true } });
  t.equal(`forward+${created!.data.forwardingToken}@inbound.example.test`, out.forwardingAddress);
  const other = second.json<{ forwardingAddress: string }>();
  t.not(other.forwardingAddress, out.forwardingAddress, 'each site has its own address');
});

t.test('site create for a domain the team has a site for already: refused, nothing recorded', async (t) => {
  const before = (await streamEvents(`site-${siteId}`)).length;
  const again = await cli('site', 'create', '--team', teamId, '--domain', 'ACME.test');
  t.not(again.code, 0);
  t.match(again.json(), { error: `team ${teamId} has a site for acme.test already: ${siteId}` });
  t.notMatch(again.stderr, /\n\s+at /, 'no stack trace');
  t.equal((await streamEvents(`site-${siteId}`)).length, before);
  const otherTeam = await cli('team', 'create', '--name', 'Other', '--owner-email', 'owner@other.test');
  t.equal(otherTeam.code, 0, otherTeam.stderr);
  const elsewhere = await cli('site', 'create', '--team', otherTeam.json<{ teamId: string }>().teamId, '--domain', 'acme.test');
  t.equal(elsewhere.code, 0, 'another team may have a site for the same domain');
});

t.test('site set, each option', async (t) => {
  const cases: Array<[string[], Record<string, unknown>]> = [
    [['--plan', 'advanced'], { plan: 'advanced' }],
    [['--licensed', 'false'], { licensed: false }],
    [['--sending-domain-verified', 'true'], { sendingDomainVerified: true }],
    [['--ai-credits', '250'], { aiCredits: 250 }],
  ];
  // Four processes at once on one stream: each append either wins or retries after the conflict.
  const results = await Promise.all(cases.map(([args]) => cli('site', 'set', '--site', siteId, ...args)));
  const recorded = (await streamEvents(`site-${siteId}`)).filter((e) => e.type === 'SiteSettingsChanged').map((e) => e.data.changes);
  for (const [i, [args, changes]] of cases.entries()) {
    t.equal(results[i]!.code, 0, results[i]!.stderr);
    t.same(results[i]!.json(), { siteId, ...changes }, args.join(' '));
    t.ok(recorded.some((c) => JSON.stringify(c) === JSON.stringify(changes)), `${args.join(' ')} recorded`);
  }
  t.equal(recorded.length, 4, 'one event per change');
  const r = await cli('site', 'set', '--site', siteId, '--licensed', 'true', '--plan', 'starter');
  t.equal(r.code, 0, r.stderr);
  t.same((await streamEvents(`site-${siteId}`)).at(-1)?.data.changes, { licensed: true, plan: 'starter' }, 'several at once');
});

t.test('apikey create prints {id, key}; apikey revoke revokes it', async (t) => {
  const r = await cli('apikey', 'create', '--team', teamId, '--scopes', 'webhooks:read,webhooks:write', '--site', siteId, '--name', 'ci');
  t.equal(r.code, 0, r.stderr);
  const out = r.json<{ id: string; key: string }>();
  t.same(Object.keys(out).sort(), ['id', 'key']);
  t.match(out.key, /^svc_[0-9a-f]{64}$/);
  const [created] = await streamEvents(`apikey-${out.id}`);
  t.match(created, { type: 'ApiKeyCreated', data: { teamId, name: 'ci', scopes: ['webhooks:read', 'webhooks:write'], siteId } });
  t.match(created!.data.keyHash, /^[0-9a-f]{64}$/);
  const history = JSON.stringify((await streamEvents(`apikey-${out.id}`)).concat(await streamEvents(`team-${teamId}`)));
  t.notOk(history.includes(out.key.slice(4)), 'the key itself is not in the history');

  const revoked = await cli('apikey', 'revoke', '--id', out.id);
  t.equal(revoked.code, 0, revoked.stderr);
  t.match(revoked.json(), { id: out.id, revoked: true });
  t.match((await streamEvents(`apikey-${out.id}`)).at(-1), { type: 'ApiKeyRevoked' });
  t.equal((await cli('apikey', 'revoke', '--id', out.id)).code, 0, 'revoking twice is harmless');
});

t.test('bad arguments exit non-zero with a clear message', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['site', 'create', '--team', teamId, '--domain', 'x.test', '--plan', 'gold'], /--plan must be one of starter, pro, advanced/],
    [['site', 'create', '--team', teamId, '--domain', 'not a domain'], /--domain must be a domain name/],
    [['site', 'create', '--team', teamId, '--domain', 'https://acme.test/'], /--domain must be a domain name/],
    [['site', 'create', '--team', teamId, '--domain', 'acme'], /--domain must be a domain name/],
    [['site', 'create', '--team', teamId], /required option.*--domain/],
    [['no-such-command'], /unknown command/],
    [['team', 'set', '--team', teamId, '--billing', 'late'], /--billing must be one of/],
    [['site', 'set', '--site', siteId, '--licensed', 'maybe'], /--licensed must be true or false/],
    [['site', 'set', '--site', siteId, '--ai-credits', '-3'], /--ai-credits must be a non-negative integer/],
    [['apikey', 'create', '--team', teamId, '--scopes', 'webhooks:read,root'], /unknown scope\(s\): root/],
    [['team', 'create', '--owner-email', 'x@y.test'], /required option.*--name/],
    [['team', 'set', '--team', '01ARZ3NDEKTSV4RRFFQ69G5FAV', '--billing', 'canceled'], /team 01ARZ3NDEKTSV4RRFFQ69G5FAV not found/],
    [['apikey', 'revoke', '--id', '01ARZ3NDEKTSV4RRFFQ69G5FAV'], /not found/],
    [['team', 'create', '--name', 'Dup', '--owner-email', 'owner@acme.test'], /exists/],
    [['team', 'create', '--name', 'X', '--owner-email', 'notanemail'], /not an email address: notanemail/],
    [['team', 'create', '--name', '  ', '--owner-email', 'blank@acme.test'], /the team name must be 1 to 120 characters/],
    [['team', 'create', '--name', 'X', '--owner-email', 'short@acme.test', '--owner-password', 'short'], /at least 8 characters/],
    [['team', 'add-user', '--team', teamId, '--email', 'not an email'], /not an email address: not an email/],
    [['team', 'set', '--team', teamId], /nothing to change: give --billing/],
    [['site', 'set', '--site', siteId], /nothing to change: give --plan/],
    [['apikey', 'create', '--team', teamId, '--scopes', 'webhooks:read', '--name', '  '], /the key name must be 1 to 120 characters/],
    [['apikey', 'create', '--team', teamId, '--scopes', 'webhooks:read', '--name', 'bidi\u202Eevil'], /the key name must be one line of text/],
    [['credits', 'show', '--team', '01ARZ3NDEKTSV4RRFFQ69G5FAV'], /team 01ARZ3NDEKTSV4RRFFQ69G5FAV not found/],
    [['webhooks', 'deliveries', '01ARZ3NDEKTSV4RRFFQ69G5FAV'], /subscription 01ARZ3NDEKTSV4RRFFQ69G5FAV not found/],
  ];
  const results = await Promise.all(cases.map(([args]) => cli(...args)));
  for (const [i, [args, message]] of cases.entries()) {
    const r = results[i]!;
    t.not(r.code, 0, `${args.join(' ')}: non-zero exit`);
    t.match(r.stderr + r.stdout, message, `${args.join(' ')}: message`);
    t.notMatch(r.stderr, /\n\s+at .*\.ts:\d+/, `${args.join(' ')}: no stack trace`);
    // With --json every failure, an argument error included, prints one JSON object on stdout.
    t.match(r.json(), { error: message }, `${args.join(' ')}: one JSON object with --json`);
  }
  const [bad, config] = await Promise.all([
    outreach(['--json', 'apikey', 'revoke', '--id', 'nope'], env),
    outreach(['--json', 'events', 'tail', '--no-follow'], { ...env, SECRET_KEY: 'short' }),
  ]);
  t.match(bad.json(), { error: /not found/ }, 'with --json an operator error is one JSON object');
  t.not(config.code, 0);
  t.match(config.stdout + config.stderr, /SECRET_KEY/, 'a configuration error names the variable');
});

