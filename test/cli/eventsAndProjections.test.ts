import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createApiKey, createSite, createTeam, setTeamBillingStatus } from '../../src/commands/tenancy.ts';
import { createSubscription, deleteSubscription, rotateSubscriptionSecret } from '../../src/commands/webhookSubscriptions.ts';
import { loadConfig } from '../../src/config.ts';
import { allProjections } from '../../src/projections/index.ts';
import { createServices } from '../../src/services.ts';
import { outreach, type EventLine } from '../helpers/cli.ts';

// Each CLI run is a fresh Node process (about 1 s on an idle machine): allow for busy CI machines.
t.setTimeout(300_000);

// The auditor and operator commands, on a history written in-process (fewer process spawns).
const dataDir = mkdtempSync(join(tmpdir(), 'outreach-cli-events-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { DATA_DIR: dataDir };
const cli = (...args: string[]) => outreach(['--json', ...args], env);


const config = loadConfig(env);
const setup = await createServices(config);
const { teamId } = await createTeam(setup, { name: 'Acme', ownerEmail: 'owner@acme.test' });
await setTeamBillingStatus(setup, { teamId, billingStatus: 'past_due' });
const { siteId } = await createSite(setup, { teamId, domain: 'acme.test', plan: 'pro' }, config.MAIL_DOMAIN);
await createApiKey(setup, { teamId, name: 'k', scopes: ['webhooks:read'], siteId: null });
await setup.close();

t.test('events read <stream> and events tail --no-follow print JSON lines with type, position, time and data', async (t) => {
  const [read, unknown, tail] = await Promise.all([
    cli('events', 'read', `team-${teamId}`),
    cli('events', 'read', 'team-nope'),
    cli('events', 'tail', '--no-follow'),
  ]);
  t.equal(read.code, 0, read.stderr);
  const lines = read.lines<EventLine>();
  t.ok(lines.length >= 3);
  for (const l of lines) {
    t.match(l, { type: String, position: /^\d+$/, time: /^\d{4}-\d\d-\d\dT.*Z$/, data: Object, stream: `team-${teamId}` });
  }
  t.equal(unknown.code, 1, 'an unknown stream is an error, not an empty stream');
  t.match(unknown.json(), { error: /no stream "team-nope"/ });
  t.equal(tail.code, 0, tail.stderr);
  const all = tail.lines<EventLine>();
  t.ok(all.length > lines.length);
  const positions = all.map((l) => BigInt(l.position));
  t.ok(positions.every((p, i) => i === 0 || p > positions[i - 1]!), 'in increasing position order');
  const from = await cli('events', 'tail', '--no-follow', '--from', all[2]!.position);
  t.same(from.lines<EventLine>().map((l) => l.position), all.slice(3).map((l) => l.position), '--from starts after the position');
});

t.test('projections rebuild (all, and one by name) leaves the documents as they were', async (t) => {
  const config = loadConfig(env);
  const s = await createServices(config);
  const a = await createSubscription(s, { teamId, siteId, label: 'a', url: 'https://example.com/a', eventTypes: ['outreach.reply_sent'], createdByOauthClientId: null });
  const b = await createSubscription(s, { teamId, siteId, label: 'b', url: 'https://example.com/b', eventTypes: ['outreach.message_received'], createdByOauthClientId: null });
  await deleteSubscription(s, { siteId, subscriptionId: b.subscriptionId });
  await s.projections.catchUp();
  const snapshot = async () => {
    const out: Record<string, unknown> = {};
    for (const p of allProjections) for (const c of p.collections) out[c] = await s.readModels.find(c, {}, { sortBy: 'id' });
    return out;
  };
  const before = await snapshot();
  t.same((before.webhookSubscriptions as Array<{ id: string }>).map((d) => d.id), [a.subscriptionId]);
  await s.close();

  for (const args of [['projections', 'rebuild'], ['projections', 'rebuild', 'webhookSubscriptions']]) {
    const r = await cli(...args);
    t.equal(r.code, 0, r.stderr);
    const out = r.json<{ rebuilt: string[]; position: string }>();
    t.same(out.rebuilt, args.length === 2 ? allProjections.map((p) => p.name) : ['webhookSubscriptions']);
    const s2 = await createServices(config);
    const snap = async () => {
      const o: Record<string, unknown> = {};
      for (const p of allProjections) for (const c of p.collections) o[c] = await s2.readModels.find(c, {}, { sortBy: 'id' });
      return o;
    };
    t.same(await snap(), before, `${args.join(' ')}: same documents`);
    t.equal(out.position, (await s2.events.headPosition()).toString());
    await s2.close();
  }
  const human = await outreach(['projections', 'rebuild'], env);
  t.equal(human.code, 0, human.stderr);
  t.match(human.stdout, new RegExp(`rebuilt ${allProjections.map((p) => p.name).join(', ')} up to position \\d+`));
});

t.test('projections rebuild of an unknown name exits non-zero and names the known ones', async (t) => {
  const r = await cli('projections', 'rebuild', 'nope');
  t.not(r.code, 0);
  t.match(r.stdout + r.stderr, /unknown projection nope; known: teams, sites/);
});

t.test('events read redacts sealed secrets, the previous one of a rotation too; --from refuses what is not a position', async (t) => {
  const s = await createServices(config);
  const { subscriptionId } = await createSubscription(s, { teamId, siteId, label: 'r', url: 'https://example.com/r', eventTypes: ['outreach.reply_sent'], createdByOauthClientId: null });
  await rotateSubscriptionSecret(s, { siteId, subscriptionId, graceSeconds: 3_600 });
  await s.close();
  const read = await cli('events', 'read', `webhook_subscription-${subscriptionId}`);
  t.equal(read.code, 0, read.stderr);
  const rotated = read.lines<EventLine>().find((l) => l.type === 'SubscriptionSecretRotated');
  t.match(rotated?.data, { sealedSecret: '[redacted]', previousSealedSecret: '[redacted]' });
  t.notMatch(read.stdout, /"v1\.[A-Za-z0-9_-]+\./, 'no sealed secret is printed');

  for (const from of ['abc', '1.5', '-2', '99999999999999999999999', '9223372036854775808']) {
    const bad = await cli('events', 'tail', '--no-follow', '--from', from);
    t.not(bad.code, 0, `--from ${from}: exits non-zero`);
    t.match(bad.stderr, /--from must be a global position/, `--from ${from}: says why`);
    t.notMatch(bad.stderr, /\n\s+at /, `--from ${from}: no stack trace`);
  }
});

t.test('contact suppress works on a data directory no server keeps current', async (t) => {
  const fresh = mkdtempSync(join(tmpdir(), 'outreach-cli-contact-'));
  t.teardown(() => rmSync(fresh, { recursive: true, force: true }));
  const freshEnv = { DATA_DIR: fresh };
  const team = await outreach(['--json', 'team', 'create', '--name', 'Fresh', '--owner-email', 'owner@fresh.test'], freshEnv);
  const { teamId: freshTeam } = JSON.parse(team.stdout) as { teamId: string };
  const site = await outreach(['--json', 'site', 'create', '--team', freshTeam, '--domain', 'fresh.test'], freshEnv);
  t.equal(site.code, 0, site.stderr);
  const suppressed = await outreach(['--json', 'contact', 'suppress', '--team', freshTeam, '--email', 'x@y.test'], freshEnv);
  t.equal(suppressed.code, 0, suppressed.stdout + suppressed.stderr);
  t.match(JSON.parse(suppressed.stdout), { teamId: freshTeam, email: 'x@y.test', changed: true });
  const read = await outreach(['--json', 'events', 'read', `suppression-${freshTeam}`], freshEnv);
  t.match(read.lines<EventLine>(), [{ type: 'ContactSuppressed', metadata: { actor: 'cli', actorKind: 'operator' } }], 'the event names the operator, and the line prints it');
});
