import t, { type Test } from 'tap';
import { outreachWork } from '../../src/agentWork/outreach.ts';
import { importProspects, loadProspects } from '../../src/commands/prospects.ts';
import { suppressContact } from '../../src/commands/suppression.ts';
import { configureAgent } from '../../src/commands/agents.ts';
import { loadDispatchFacts, recordedDispatch } from '../../src/processors/agent/dispatchFacts.ts';
import { allEvents } from '../ingestion/helpers.ts';
import type { ProposalOf } from '../../src/domain/agentWork.ts';
import { bouncedMessageId } from '../../src/domain/bounceAddress.ts';
import { getConversation } from '../../src/readModels/conversations.ts';
import { MESSAGES, type MessageDoc } from '../../src/readModels/messages.ts';
import { findThread } from '../../src/readModels/messageThreads.ts';
import { getOpportunity } from '../../src/readModels/opportunities.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { startSmtpSink } from '../agent/smtpSink.ts';
import { testCertificate } from '../webhooks/helpers.ts';
import { ARTICLES } from './corpus/homeCoffee.ts';
import { runOf, workDeps } from './helpers.ts';
import { act } from '../inbox/actionsHelpers.ts';
import { html, loopbackFetcher, startSite, type TestSite } from './sites.ts';

async function setUp(t: Test) {
  const { caFile } = await testCertificate();
  const sink = await startSmtpSink();
  const app = await startTestApp({ env: { OUTBOUND_SMTP_URL: sink.url, WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8', WEBHOOK_EXTRA_CA_FILE: caFile } });
  const tenant = await createTenant(app.services, { plan: 'advanced', sendingDomainVerified: true });
  // A run is started only for an active agent (and each pitch checks it is still).
  await configureAgent(app.services, { siteId: tenant.siteId, agentKey: 'outreach', changes: { active: true } });
  const fetcher = await loopbackFetcher();
  const sites: TestSite[] = [];
  t.teardown(async () => {
    await fetcher.close();
    for (const s of sites) await s.close();
    await app.close();
    await sink.close();
  });
  const site = async (pages: Parameters<typeof startSite>[0]) => {
    const s = await startSite(pages);
    sites.push(s);
    return s;
  };
  const deps = workDeps(app.services, ARTICLES, { fetcher });
  const settle = async () => app.services.projections.waitFor(await app.services.events.headPosition(), 5_000);
  return { app, tenant, sink, site, deps, settle };
}

t.test('outbound discovery: contact found on the prospect site, pitch sent, suppressed and robots-disallowed prospects skipped; the reply threads in', async (t) => {
  const { app, tenant, sink, site, deps, settle } = await setUp(t);
  const roast = await site({
    '/robots.txt': { status: 200, body: 'User-agent: *\nDisallow: /drafts/\n' },
    '/': {
      body: html('Roast Weekly: espresso and burr grinder reviews', '<h1>Grinder shoot-out</h1><a href="/about/">About</a> <a href="/contact-us/">Contact</a>'),
    },
    '/contact-us/': { body: html('Contact', '<p>Pitches to <a href="mailto:editor@roastweekly.example">our editor</a>; noreply@roastweekly.example is not read.</p>') },
  });
  const bean = await site({ '/': { body: html('The Bean Blog', '<p>Write to hello [at] beanblog [dot] example</p>') } });
  const closed = await site({
    '/robots.txt': { status: 200, body: 'User-agent: OutreachServiceBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n' },
    '/': { body: html('Closed', '<a href="mailto:owner@closed.example">mail</a>') },
  });
  const silent = await site({ '/': { body: html('Silent Cups', '<p>No address anywhere.</p>') } });
  await suppressContact(app.services, { teamId: tenant.teamId, teamSiteIds: [tenant.siteId], email: 'Hello@BeanBlog.example', reason: 'opted_out', source: 'manual', siteId: tenant.siteId });
  await importProspects(app.services, {
    siteId: tenant.siteId,
    teamId: tenant.teamId,
    prospects: [
      { url: roast.origin, name: 'Roast Weekly', notes: 'espresso gear reviews' },
      { url: bean.origin, name: 'The Bean Blog', notes: null },
      { url: closed.origin, name: null, notes: null },
      { url: silent.origin, name: null, notes: null },
      { url: 'https://10.20.30.40', name: 'Private', notes: null },
    ],
  });
  await settle();

  const run = runOf('outreach', tenant.siteId, { senderName: 'Mia from Brew at Home', signature: 'Mia\nbrewathome.example', dailySendCap: 10 });
  const result = await outreachWork({ ...run, teamId: tenant.teamId }, deps);
  t.same(result.counts, { prospectsLooked: 5, pagesFetched: result.counts.pagesFetched, pitchesSent: 1, sendFailures: 0, suppressed: 1, noContact: 1, robotsDisallowed: 1, unreachable: 1, notOnDomain: 0, alreadyPitched: 0, alreadyHandled: 0, capReached: 0 });
  t.equal(result.proposals.length, 1);
  const proposal = result.proposals[0] as ProposalOf<'outreach'>;
  t.match(proposal, { kind: 'outreach', prospectUrl: roast.origin, contactEmail: 'editor@roastweekly.example', subject: 'A resource for Roast Weekly: Choosing a Burr Grinder', offeredUrl: 'https://brewathome.example/burr-grinder/' });

  t.equal(sink.received.length, 1, 'one mail: not to the suppressed address, not to the robots-closed site');
  const mail = sink.received[0]!;
  t.same(mail.rcptTo, ['editor@roastweekly.example']);
  t.equal(mail.parsed.from?.value[0]?.address, 'outreach@example.test');
  t.equal(mail.parsed.from?.value[0]?.name, 'Mia from Brew at Home');
  const pitchMessageId = /^<reply\.([0-9a-z]{26})@/.exec(mail.parsed.messageId ?? '')?.[1]?.toUpperCase();
  t.ok(pitchMessageId);
  t.equal(bouncedMessageId(app.services.secrets, mail.mailFrom, app.services.config.MAIL_DOMAIN), pitchMessageId, "bounces come back to the pitch's own bounce address");
  t.match(mail.parsed.text, /"Choosing a Burr Grinder" on example\.test:\nhttps:\/\/brewathome\.example\/burr-grinder\//);
  t.match(mail.parsed.text, /Mia\nbrewathome\.example\s*$/);
  t.notOk(closed.requests.some((r) => r.path === '/'), "robots.txt kept us off the closed site's pages");
  t.same(closed.requests.map((r) => r.path), ['/robots.txt']);
  t.ok(roast.requests.every((r) => r.userAgent.startsWith('OutreachServiceBot/')));

  await settle();
  const conversation = await getConversation(app.services.readModels, proposal.conversationId);
  t.match(conversation, { siteId: tenant.siteId, entrySource: 'outbound_pitch', status: 'open', contactEmail: 'editor@roastweekly.example', contactName: 'Roast Weekly', subject: proposal.subject, messageCount: 1 });
  t.match(await getOpportunity(app.services.readModels, proposal.opportunityId), { conversationId: proposal.conversationId, entrySource: 'outbound_pitch', targetUrl: 'https://brewathome.example/burr-grinder/', sourceUrl: roast.origin, stub: false });
  const [outbound] = await app.services.readModels.find<MessageDoc>(MESSAGES, { siteId: tenant.siteId });
  t.match(outbound, { direction: 'outbound', senderType: 'agent', to: 'editor@roastweekly.example', deliveryStatus: 'sent' });
  const pitchId = mail.parsed.messageId!;
  t.same(await findThread(app.services.readModels, tenant.siteId, [pitchId.replace(/^<|>$/g, '')]), { conversationId: proposal.conversationId, opportunityId: proposal.opportunityId, entrySource: 'outbound_pitch' });

  const prospects = await loadProspects(app.services, tenant.siteId);
  t.same(
    [...prospects.prospects.values()].map((p) => [p.name ?? p.url, p.status, p.skipReason]),
    [
      ['Roast Weekly', 'pitched', null],
      ['The Bean Blog', 'skipped', 'contact_suppressed'],
      [closed.origin, 'skipped', 'robots_disallowed'],
      [silent.origin, 'skipped', 'no_contact_found'],
      ['Private', 'skipped', 'unreachable'],
    ],
  );

  // The prospect answers the pitch: ingestion threads it into the pitch's conversation.
  const reply = await app.fastify.inject({
    method: 'POST',
    url: `/api/v1/sites/${tenant.siteId}/outreach/inbox/messages`,
    headers: bearer(tenant.key),
    payload: {
      from: 'editor@roastweekly.example',
      fromName: 'Roast Weekly',
      subject: `Re: ${proposal.subject}`,
      bodyText: 'Thanks, happy to link it from our grinder shoot-out.',
      messageId: '<answer-1@roastweekly.example>',
      inReplyTo: pitchId,
      references: pitchId,
      runExtraction: false,
    },
  });
  t.equal(reply.statusCode, 201, reply.body);
  t.same(reply.json().conversationIds, [proposal.conversationId], 'the reply joined the pitch conversation');
  t.equal(reply.json().entrySource, 'outbound_pitch');
  await settle();
  t.match(await getConversation(app.services.readModels, proposal.conversationId), { messageCount: 2, unread: true });
  // The agent answers it with no ask of the prospect's: the pitch's link is the site's own article.
  const dispatched = (await allEvents(app.services)).map(recordedDispatch).find((d) => d?.dispatch.conversationId === proposal.conversationId);
  const facts = await loadDispatchFacts(app.services, dispatched!);
  t.equal(facts?.ask, null, "the site's own link is not taken for the prospect's ask");

  const again = await outreachWork({ ...run, teamId: tenant.teamId }, deps);
  t.same(again.proposals, [], 'a second run finds nobody left to pitch');
  t.equal(sink.received.length, 1);
});

t.test('the daily send cap holds across runs of the same day', async (t) => {
  const { app, tenant, sink, site, deps, settle } = await setUp(t);
  const pages = (who: string) => ({
    '/': { status: 301, headers: { location: '/en/' } },
    '/en/': { body: html(`${who} coffee`, `<a href="/en/contact/">Contact</a>`) },
    '/en/contact/': { body: html('Contact', `<a href="mailto:${who}@${who}.example">mail</a>`) },
  });
  const a = await site(pages('alpha'));
  const b = await site(pages('bravo'));
  const c = await site(pages('charlie'));
  await importProspects(app.services, { siteId: tenant.siteId, teamId: tenant.teamId, prospects: [a, b, c].map((s) => ({ url: s.origin, name: null, notes: null })) });
  await settle();
  const run = { ...runOf('outreach', tenant.siteId, { dailySendCap: 2 }), teamId: tenant.teamId };
  const first = await outreachWork(run, deps);
  t.equal(first.counts.pitchesSent, 2);
  t.equal(first.counts.capReached, 1, 'the third prospect waits');
  const second = await outreachWork(run, deps);
  t.same(second.proposals, []);
  t.equal(second.counts.capReached, 1);
  t.same(sink.received.map((m) => m.rcptTo[0]).sort(), ['alpha@alpha.example', 'bravo@bravo.example'], 'found past a redirected home page, on its contact page');
  t.same(a.requests.map((r) => r.path), ['/robots.txt', '/', '/en/', '/en/contact/']);
  const state = await loadProspects(app.services, tenant.siteId);
  t.equal(state.prospects.get(c.origin)?.status, 'new', 'left for tomorrow');
});

t.test('an unverified sending domain: the run fails and sends nothing', async (t) => {
  const { app, sink, deps } = await setUp(t);
  const other = await createTenant(app.services, { plan: 'advanced' });
  await t.rejects(outreachWork({ ...runOf('outreach', other.siteId), teamId: other.teamId }, deps), /sending domain example\.test is not verified/);
  t.equal(sink.received.length, 0);
});

t.test('an agent paused since the run was queued: the run ends before its first pitch and sends nothing', async (t) => {
  const { app, sink, site, deps } = await setUp(t);
  const other = await createTenant(app.services, { plan: 'advanced', sendingDomainVerified: true });
  const prospect = await site({ '/': { body: html('Roast Weekly', '<a href="mailto:editor@roastweekly.example">mail</a>') } });
  await importProspects(app.services, { teamId: other.teamId, siteId: other.siteId, prospects: [{ url: prospect.origin, name: null, notes: null }] });
  await t.rejects(outreachWork({ ...runOf('outreach', other.siteId), teamId: other.teamId }, deps), /the Outreach Agent is inactive now; 0 pitches were sent before/);
  t.equal(sink.received.length, 0);
});

t.test('one person behind two prospects of the site gets one pitch; the second is skipped as contact_already_pitched, in this run and the next', async (t) => {
  const { app, tenant, sink, site, deps, settle } = await setUp(t);
  const page = { body: html('Roast Weekly: espresso and burr grinder reviews', '<p>Pitches to <a href="mailto:Editor@roastweekly.example">our editor</a></p>') };
  const roast = await site({ '/': page, '/blog': page, '/news': page });
  await importProspects(app.services, {
    siteId: tenant.siteId,
    teamId: tenant.teamId,
    prospects: [
      { url: roast.origin, name: 'Roast Weekly', notes: null },
      { url: `${roast.origin}/blog`, name: 'Roast Weekly blog', notes: null },
    ],
  });
  await settle();
  const run = { ...runOf('outreach', tenant.siteId, { dailySendCap: 10 }), teamId: tenant.teamId };
  const first = await outreachWork(run, deps);
  t.equal(first.counts.pitchesSent, 1);
  t.equal(first.counts.alreadyPitched, 1);
  await importProspects(app.services, { siteId: tenant.siteId, teamId: tenant.teamId, prospects: [{ url: `${roast.origin}/news`, name: null, notes: null }] });
  await settle();
  const second = await outreachWork(run, deps);
  t.equal(second.counts.pitchesSent, 0, 'a prospect imported later, same person: no second pitch');
  t.equal(second.counts.alreadyPitched, 1);
  t.same(sink.received.map((m) => m.rcptTo[0]), ['editor@roastweekly.example'], 'one cold pitch to the person');
  const state = await loadProspects(app.services, tenant.siteId);
  t.same(
    [`${roast.origin}/blog`, `${roast.origin}/news`].map((url) => [state.prospects.get(url)?.status, state.prospects.get(url)?.skipReason]),
    [['skipped', 'contact_already_pitched'], ['skipped', 'contact_already_pitched']],
  );
});

t.test("a person's follow-up on a pitch nobody answered yet threads onto the pitch", async (t) => {
  const { app, tenant, sink, site, deps, settle } = await setUp(t);
  const roast = await site({ '/': { body: html('Roast Weekly: espresso and burr grinder reviews', '<a href="mailto:editor@roastweekly.example">mail</a>') } });
  await importProspects(app.services, { siteId: tenant.siteId, teamId: tenant.teamId, prospects: [{ url: roast.origin, name: 'Roast Weekly', notes: null }] });
  await settle();
  const result = await outreachWork({ ...runOf('outreach', tenant.siteId, { dailySendCap: 10 }), teamId: tenant.teamId }, deps);
  const { conversationId } = result.proposals[0] as ProposalOf<'outreach'>;
  await settle();
  const res = await act(app.fastify, tenant, conversationId, 'reply', { text: 'Just following up on my note below.' });
  t.equal(res.statusCode, 201);
  const [pitch, followUp] = sink.received;
  t.equal(followUp?.parsed.inReplyTo, pitch?.parsed.messageId, 'In-Reply-To names the pitch');
  t.same(followUp?.parsed.references, pitch?.parsed.messageId, 'References too');
  t.equal(followUp?.parsed.subject, `Re: ${pitch?.parsed.subject}`);
});
