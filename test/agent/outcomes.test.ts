import t from 'tap';
import { configureAgent } from '../../src/commands/agents.ts';
import { suppressContact } from '../../src/commands/suppression.ts';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { envelopes, startAgentHarness } from './helpers.ts';

t.test('decline: a polite reply, the conversation declined', async (t) => {
  const a = await startAgentHarness();
  t.teardown(() => a.close());
  const r = await a.pitch({
    from: 'deals@casino-partners.biz',
    subject: 'Sponsored post offer',
    bodyText: 'Hi, we pay $150 per sponsored post with a dofollow link to our online casino. Let me know your price.',
    messageId: '<casino-1@casino-partners.biz>',
  });
  const id = r.conversationIds[0]!;
  const changed = await a.waitForEvent(id, 'ConversationStatusChanged');
  t.match(changed.data, { oldStatus: 'open', newStatus: 'declined', resolvedBy: 'agent', resolutionOutcome: 'decline' });
  t.equal(a.sink.received.length, 1);
  t.equal(a.sink.received[0]!.parsed.inReplyTo, '<casino-1@casino-partners.biz>');
  t.notMatch(a.sink.received[0]!.parsed.text, /casino/i, 'the decline does not repeat their link or topic');
  await a.receiver.waitFor((x) => x.some((y) => y.json.type === 'outreach.reply_sent'), 10_000);
  t.match(envelopes(a.receiver, 'outreach.reply_sent')[0]!.data, { triage: 'decline', autoResolved: true, sendOutcome: 'sent' });
});

t.test('decline without a reply when the site answers declines silently', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  await configureAgent(a.h.app.services, { siteId: a.h.tenant.siteId, agentKey: 'outreach', changes: { declineReplies: false } });
  await a.startAgent();
  const r = await a.pitch({ from: 'crypto@spam.biz', subject: 'Crypto', bodyText: 'Buy links for our crypto casino, $50 each, payment upfront.' });
  const changed = await a.waitForEvent(r.conversationIds[0]!, 'ConversationStatusChanged');
  t.match(changed.data, { newStatus: 'declined', resolutionOutcome: 'decline' });
  t.equal(a.sink.received.length, 0);
});

t.test('needs_human: no reply, awaiting_human', async (t) => {
  const a = await startAgentHarness();
  t.teardown(() => a.close());
  const r = await a.pitch({
    subject: 'Question about your article',
    bodyText: 'Hello, I have a question about the terms of your licence for the photos in your post. Could we talk about it on a call?',
  });
  const changed = await a.waitForEvent(r.conversationIds[0]!, 'ConversationStatusChanged');
  t.match(changed.data, { newStatus: 'awaiting_human', resolvedBy: 'agent', resolutionOutcome: 'needs_human' });
  await a.receiver.waitFor((x) => x.some((y) => y.json.type === 'outreach.conversation_status_changed'), 10_000);
  t.equal(a.sink.received.length, 0);
  t.equal(envelopes(a.receiver, 'outreach.reply_sent').length, 0);
});

t.test('opt-out: the contact is suppressed team-wide, no reply, and a later pitch from it stays paused', async (t) => {
  const a = await startAgentHarness();
  t.teardown(() => a.close());
  const r = await a.pitch({ from: 'Optout@Prospect.io', subject: 'Re: your email', bodyText: 'Please remove me from your list and stop emailing me.' });
  const changed = await a.waitForEvent(r.conversationIds[0]!, 'ConversationStatusChanged');
  t.match(changed.data, { newStatus: 'declined', resolvedBy: 'agent', resolutionOutcome: 'opted_out' });
  await a.receiver.waitFor((x) => x.some((y) => y.json.type === 'outreach.contact_suppressed'), 10_000);
  const suppressed = envelopes(a.receiver, 'outreach.contact_suppressed')[0]!;
  t.same(suppressed.data, { email: 'optout@prospect.io', reason: 'opted_out', source: 'inbound_classifier', upgraded: false });
  t.equal(a.sink.received.length, 0);
  await a.h.app.services.projections.waitFor(await a.h.app.services.events.headPosition(), 5_000);
  const again = await a.pitch({ from: 'optout@prospect.io', bodyText: 'A new pitch for a guest post on https://prospect.io/x' });
  t.equal(again.aiPaused, true);
});

t.test('a precondition that stops holding between ingestion and the worker: no mail, the reason recorded', async (t) => {
  const cases: Array<{ reason: string; breakIt: (a: Awaited<ReturnType<typeof startAgentHarness>>) => Promise<unknown> }> = [
    { reason: 'agent_inactive', breakIt: (a) => configureAgent(a.h.app.services, { siteId: a.h.tenant.siteId, agentKey: 'outreach', changes: { active: false } }) },
    { reason: 'auto_reply_disabled', breakIt: (a) => configureAgent(a.h.app.services, { siteId: a.h.tenant.siteId, agentKey: 'outreach', changes: { autoReply: false } }) },
    { reason: 'sending_domain_unverified', breakIt: (a) => changeSiteSettings(a.h.app.services, { siteId: a.h.tenant.siteId, changes: { sendingDomainVerified: false } }) },
    { reason: 'agent_inactive', breakIt: (a) => changeSiteSettings(a.h.app.services, { siteId: a.h.tenant.siteId, changes: { plan: 'pro' } }) },
    {
      reason: 'contact_suppressed',
      breakIt: (a) => suppressContact(a.h.app.services, { teamId: a.h.tenant.teamId, teamSiteIds: [a.h.tenant.siteId], email: 'jane@prospect.io', reason: 'manual', source: 'manual', siteId: a.h.tenant.siteId }),
    },
  ];
  for (const c of cases) {
    const a = await startAgentHarness({ startAgent: false });
    try {
      const r = await a.pitch();
      t.equal(r.aiPaused, false, `${c.reason}: dispatched at ingestion`);
      await c.breakIt(a);
      await a.h.app.services.projections.waitFor(await a.h.app.services.events.headPosition(), 5_000);
      await a.startAgent();
      const skipped = await a.waitForEvent(r.conversationIds[0]!, 'AgentSkipped');
      t.equal(skipped.data.reason, c.reason);
      t.equal(a.sink.received.length, 0, `${c.reason}: no mail`);
    } finally {
      await a.close();
    }
  }
});

t.test('a send refused for a while is retried with backoff; refused for good, the conversation goes to a person', async (t) => {
  let tries = 0;
  const a = await startAgentHarness({ sink: { data: () => (++tries <= 2 ? { code: 451, message: '4.3.0 try again later' } : null) } });
  t.teardown(() => a.close());
  const r = await a.pitch();
  const id = r.conversationIds[0]!;
  await a.waitForEvent(id, 'ReplySent');
  const types = (await a.conversationEvents(id)).map((e) => e.type);
  t.same(types, [
    'AgentTriaged', 'ReplyDrafted', 'ReplySendAttempted', 'ReplySendFailed', 'ReplySendAttempted', 'ReplySendFailed', 'ReplySendAttempted', 'ReplySent',
    'ConversationStatusChanged',
  ]);
  t.equal(a.sink.received.length, 1);

  a.sink.behaviour.data = () => ({ code: 550, message: '5.1.1 mailbox unavailable' });
  const r2 = await a.pitch({ from: 'gone@prospect.io', messageId: '<gone@prospect.io>' });
  const changed = await a.waitForEvent(r2.conversationIds[0]!, 'ConversationStatusChanged');
  t.match(changed.data, { newStatus: 'awaiting_human', resolutionOutcome: 'send_failed' });
  const failed = (await a.conversationEvents(r2.conversationIds[0]!)).filter((e) => e.type === 'ReplySendFailed');
  t.equal(failed.length, 1, 'a permanent refusal is not retried');
  t.match(failed[0]!.data, { permanent: true, retryAt: null });
});
