import t, { type Test } from 'tap';
import { configureAgent } from '../../src/commands/agents.ts';
import { suppressContact } from '../../src/commands/suppression.ts';
import { listSitesOfTeam } from '../../src/readModels/sites.ts';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { decideAiPause } from '../../src/domain/aiPause.ts';
import { isNoReplyAddress } from '../../src/domain/noReply.ts';
import { outreach } from '../helpers/cli.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, eventsOfType, ingest, makeAgentReady } from './helpers.ts';

t.test('no-reply addresses', async (t) => {
  for (const a of [
    'noreply@x.io', 'no-reply@x.io', 'No_Reply@x.io', 'no.reply@x.io', 'donotreply@x.io', 'do-not-reply@x.io',
    'MAILER-DAEMON@x.io', 'postmaster@x.io', 'noreply+tag@x.io', 'noreply-billing@x.io', 'bounces@x.io', 'bounce123@x.io',
  ]) t.ok(isNoReplyAddress(a), a);
  for (const a of ['jane@x.io', 'noreen@x.io', 'replies@x.io', 'bouncer.jo@x.io', 'post@x.io', 'norman.reply@x.io']) t.notOk(isNoReplyAddress(a), a);
});

t.test('decideAiPause: one skipReason per cause, in a fixed order', async (t) => {
  const ready = { senderEmail: 'jane@x.io', suppressed: false, agentGate: null, sendingDomainVerified: true, conversation: null };
  t.same(decideAiPause(ready), { aiPaused: false });
  t.same(decideAiPause({ ...ready, senderEmail: 'noreply@x.io' }), { aiPaused: true, skipReason: 'no_reply_sender' });
  t.same(decideAiPause({ ...ready, suppressed: true }), { aiPaused: true, skipReason: 'contact_suppressed' });
  t.same(decideAiPause({ ...ready, agentGate: 'agent_inactive' }), { aiPaused: true, skipReason: 'agent_inactive' });
  t.same(decideAiPause({ ...ready, agentGate: 'site_not_licensed' }), { aiPaused: true, skipReason: 'agent_inactive' }, 'an unlicensed site: the agent is not active there');
  t.same(decideAiPause({ ...ready, agentGate: 'plan_excludes_agent' }), { aiPaused: true, skipReason: 'agent_inactive' }, 'a plan without the agent: likewise');
  t.same(decideAiPause({ ...ready, agentGate: 'auto_reply_disabled' }), { aiPaused: true, skipReason: 'auto_reply_disabled' });
  t.same(decideAiPause({ ...ready, sendingDomainVerified: false }), { aiPaused: true, skipReason: 'sending_domain_unverified' });
  t.same(decideAiPause({ ...ready, senderEmail: 'noreply@x.io', agentGate: 'agent_inactive' }), { aiPaused: true, skipReason: 'no_reply_sender' });
  t.same(decideAiPause({ ...ready, conversation: { handledBy: 'agent', status: 'declined' } }), { aiPaused: false }, 'a closed conversation re-opens');
  t.same(decideAiPause({ ...ready, conversation: { handledBy: 'human', status: 'open' } }), { aiPaused: true, skipReason: 'taken_over' });
  t.same(decideAiPause({ ...ready, conversation: { handledBy: 'agent', status: 'awaiting_human' } }), { aiPaused: true, skipReason: 'awaiting_human' });
  t.same(decideAiPause({ ...ready, agentGate: 'auto_reply_disabled', conversation: { handledBy: 'human', status: 'open' } }), { aiPaused: true, skipReason: 'auto_reply_disabled' });
});

t.test('aiPaused through the endpoint, each cause', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const { fastify, services } = app;
  const settle = async () => services.projections.waitFor(await services.events.headPosition(), 5_000);
  const dispatches = async () => (await eventsOfType(services, 'AgentDispatchRequested')).length;

  const expectPaused = async (t: Test, tenant: { siteId: string; key: string }, body: object, reason: string) => {
    const before = await dispatches();
    const res = await ingest(fastify, tenant, body);
    t.equal(res.statusCode, 201, `${reason}: still 201 (the message lands in the inbox)`);
    t.equal(res.json().aiPaused, true, `${reason}: aiPaused`);
    t.equal(res.json().skipReason, reason);
    t.equal(await dispatches(), before, `${reason}: no agent dispatch`);
  };

  const tenant = await createTenant(services);
  await expectPaused(t, tenant, PITCH, 'agent_inactive'); // a new site's agent is off

  await makeAgentReady(services, tenant.siteId);
  const before = await dispatches();
  const ok = await ingest(fastify, tenant, PITCH);
  t.equal(ok.json().aiPaused, false, 'ready site: not paused');
  t.equal(await dispatches(), before + 1, 'and the agent is dispatched');

  for (const from of ['noreply@prospect.io', 'no-reply@prospect.io', 'donotreply@prospect.io', 'mailer-daemon@prospect.io', 'postmaster@prospect.io']) {
    await expectPaused(t, tenant, { ...PITCH, from }, 'no_reply_sender');
  }

  const teamSiteIds = (await listSitesOfTeam(services.readModels, tenant.teamId, { sortBy: 'id' })).map((site) => site.id);
  await suppressContact(services, { teamId: tenant.teamId, teamSiteIds, email: 'Jane@Prospect.io', reason: 'opted_out', source: 'manual' });
  await settle();
  await expectPaused(t, tenant, PITCH, 'contact_suppressed');
  const suppressed = (await eventsOfType(services, 'ContactSuppressed')).at(-1)!;
  t.same(Object.keys(suppressed.data as object).sort(), ['email', 'occurredAt', 'reason', 'siteId', 'source', 'teamId', 'upgraded']);
  t.match(suppressed.data, { email: 'jane@prospect.io', siteId: tenant.siteId, upgraded: false });
  const other = { ...PITCH, from: 'other@prospect.io' };
  await configureAgent(services, { siteId: tenant.siteId, agentKey: 'outreach', changes: { autoReply: false } });
  await expectPaused(t, tenant, other, 'auto_reply_disabled');
  await configureAgent(services, { siteId: tenant.siteId, agentKey: 'outreach', changes: { autoReply: true } });
  await changeSiteSettings(services, { siteId: tenant.siteId, changes: { sendingDomainVerified: false } });
  await settle();
  await expectPaused(t, tenant, other, 'sending_domain_unverified');
  await changeSiteSettings(services, { siteId: tenant.siteId, changes: { sendingDomainVerified: true, plan: 'pro' } });
  await settle();
  await expectPaused(t, tenant, other, 'agent_inactive'); // the Outreach Agent is Advanced plan only
  await changeSiteSettings(services, { siteId: tenant.siteId, changes: { plan: 'advanced' } });
  await settle();
  t.equal((await ingest(fastify, tenant, other)).json().aiPaused, false, 'back to ready');
  await configureAgent(services, { siteId: tenant.siteId, agentKey: 'outreach', changes: { active: false } });
  await expectPaused(t, tenant, other, 'agent_inactive');
});

t.test('the CLI sets agent settings and suppresses contacts (events the running service reads)', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const { fastify, services } = app;
  const tenant = await createTenant(services, { sendingDomainVerified: true });
  const env = { DATA_DIR: app.dataDir };

  const set = await outreach(['--json', 'agent', 'set', '--site', tenant.siteId, '--key', 'outreach', '--active', 'true', '--auto-reply', 'false'], env);
  t.equal(set.code, 0, set.stderr);
  t.same(set.json(), { siteId: tenant.siteId, agentKey: 'outreach', active: true, autoReply: false });
  t.equal((await ingest(fastify, tenant, PITCH)).json().skipReason, 'auto_reply_disabled');

  t.equal((await outreach(['agent', 'set', '--site', tenant.siteId, '--key', 'outreach', '--auto-reply', 'true'], env)).code, 0);
  t.equal((await ingest(fastify, tenant, PITCH)).json().aiPaused, false);

  const bad = await outreach(['agent', 'set', '--site', tenant.siteId, '--key', 'nope', '--active', 'true'], env);
  t.not(bad.code, 0, 'an unknown agent key is refused');
  t.match(bad.stderr, /article_creation, ai_prompt, article_boost, interlinking, site_performance, outreach/);

  const sup = await outreach(['--json', 'contact', 'suppress', '--team', tenant.teamId, '--email', 'jane@prospect.io', '--reason', 'opted_out', '--source', 'inbound_classifier'], env);
  t.equal(sup.code, 0, sup.stderr);
  t.match(sup.json(), { email: 'jane@prospect.io', siteIds: [tenant.siteId], changed: true });
  await services.projections.waitFor(await services.events.headPosition(), 5_000);
  t.equal((await ingest(fastify, tenant, PITCH)).json().skipReason, 'contact_suppressed');
  const again = await outreach(['--json', 'contact', 'suppress', '--team', tenant.teamId, '--email', 'jane@prospect.io', '--reason', 'bounced'], env);
  t.match(again.json(), { changed: true });
  t.match((await eventsOfType(services, 'ContactSuppressed')).at(-1)!.data, { reason: 'bounced', upgraded: true }, 'a new reason is an upgrade');
});
