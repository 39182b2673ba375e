import t, { type Test } from 'tap';
import { independentlyVerify } from '../webhooks/helpers.ts';
import { envelopes, startAgentHarness } from './helpers.ts';

t.test('a pitch ingested over REST is triaged, answered by mail with threading headers, and announced by signed webhooks', async (t) => {
  const a = await startAgentHarness();
  t.teardown(() => a.close());
  const result = await a.pitch({ messageId: '<pitch-1@prospect.io>', references: '<older@prospect.io>' });
  t.equal(result.aiPaused, false);
  const conversationId = result.conversationIds[0]!;

  await a.receiver.waitFor((r) => r.some((x) => x.json.type === 'outreach.conversation_status_changed'), 15_000);
  await a.receiver.waitFor((r) => r.some((x) => x.json.type === 'outreach.reply_sent'), 15_000);
  t.equal(a.sink.received.length, 1, 'exactly one mail reached the SMTP sink');
  const mail = a.sink.received[0]!;
  t.same(mail.rcptTo, ['jane@prospect.io']);
  t.equal(mail.parsed.from?.value[0]?.address, 'outreach@example.test', 'From is on the site\'s sending domain');
  const replyId = /^<reply\.([0-9a-z]+)@/.exec(mail.parsed.messageId ?? '')?.[1];
  t.match(mail.mailFrom, new RegExp(`^bounce\\+${replyId}\\.[0-9a-f]{24}@${a.h.app.services.config.MAIL_DOMAIN.replaceAll('.', '\\.')}$`), 'bounces return to this mail\'s own bounce address');
  t.notOk(mail.raw.includes(a.h.tenant.forwardingAddress.split('@')[0]!), 'the site\'s forwarding address is nowhere in the mail');
  t.equal(mail.parsed.inReplyTo, '<pitch-1@prospect.io>');
  t.same(mail.parsed.references, ['<older@prospect.io>', '<pitch-1@prospect.io>']);
  t.equal(mail.parsed.subject, 'Re: Quick link suggestion for your SEO article');
  t.match(mail.parsed.messageId, /^<reply\.[0-9a-z]+@example\.test>$/);
  t.match(mail.parsed.text, /prospect\.io\/schema-guide/, 'the accept reply names the link asked for');

  const events = await a.conversationEvents(conversationId);
  t.same(
    events.map((e) => e.type),
    ['AgentTriaged', 'ReplyDrafted', 'ReplySendAttempted', 'ReplySent', 'ConversationStatusChanged'],
    'every decision of the agent is an event on the conversation',
  );
  const triaged = events[0]!.data;
  t.equal(triaged.outcome, 'accept');
  t.equal(triaged.classifier, 'offline-v1');
  const drafted = events[1]!.data;
  t.match(drafted.draftSha256, /^[0-9a-f]{64}$/);
  t.equal(drafted.direction, 'outbound');
  t.equal(drafted.senderType, 'agent');
  t.equal(drafted.rfcMessageId, mail.parsed.messageId, 'the Message-Id was fixed before sending');

  const replySent = envelopes(a.receiver, 'outreach.reply_sent')[0]!;
  t.same(Object.keys(replySent.data), ['conversationId', 'messageId', 'mailProviderMessageId', 'triage', 'autoResolved', 'sendOutcome']);
  t.match(replySent.data, { conversationId, messageId: drafted.messageId, triage: 'accept', autoResolved: true, sendOutcome: 'sent' });
  t.ok(replySent.data.mailProviderMessageId, 'the provider id is reported');
  const changed = envelopes(a.receiver, 'outreach.conversation_status_changed')[0]!;
  t.same(changed.data, { conversationId, oldStatus: 'open', newStatus: 'resolved', resolvedBy: 'agent', resolutionOutcome: 'accept' });
  for (const r of a.receiver.received) t.ok(independentlyVerify(r, a.secret), `${r.json.type} is signed with the subscription's secret`);
});

/** A pitch the agent has answered (its conversation decided): the harness, the conversation and our reply's Message-Id. */
async function answeredPitch(t: Test, messageId: string) {
  const a = await startAgentHarness();
  t.teardown(() => a.close());
  const conversationId = (await a.pitch({ messageId })).conversationIds[0]!;
  await a.waitForEvent(conversationId, 'ConversationStatusChanged');
  return { a, conversationId, ourReply: a.sink.received[0]!.parsed.messageId! };
}

t.test('a prospect answering on the thread re-dispatches the agent; the conversation re-opens', async (t) => {
  const { a, conversationId, ourReply } = await answeredPitch(t, '<pitch-2@prospect.io>');

  const reply = await a.pitch({
    subject: 'Re: Quick link suggestion for your SEO article',
    bodyText: 'Thanks for getting back to me. What would you charge for keeping the link for two years?',
    messageId: '<answer-2@prospect.io>',
    inReplyTo: ourReply,
    references: `<pitch-2@prospect.io> ${ourReply}`,
  });
  t.same(reply.conversationIds, [conversationId], 'threaded onto the same conversation');
  const reopened = await a.waitForEvent(conversationId, 'ConversationReopened');
  t.equal(reopened.data.reason, 'prospect_replied');
  await a.receiver.waitFor((r) => r.filter((x) => x.json.type === 'outreach.conversation_status_changed').length === 2, 15_000);
  const last = envelopes(a.receiver, 'outreach.conversation_status_changed')[1]!;
  t.same(last.data, { conversationId, oldStatus: 'open', newStatus: 'awaiting_human', resolvedBy: 'agent', resolutionOutcome: 'needs_human' });
  t.equal(a.sink.received.length, 1, 'no second mail: a negotiation goes to a person');
});

t.test("someone else writing on a prospect's thread: a person reads it, the contact's conversation is not declined, nobody but them is suppressed", async (t) => {
  const { a, conversationId, ourReply } = await answeredPitch(t, '<pitch-3@prospect.io>');

  // From an audit: anyone who saw the thread's ids joined it, and "unsubscribe" declined the contact's conversation as opted_out.
  const stranger = await a.pitch({
    from: 'mallory@evil.example',
    fromName: 'Mallory',
    subject: 'Re: Quick link suggestion for your SEO article',
    bodyText: 'Please unsubscribe me and stop emailing.',
    messageId: '<stranger-3@evil.example>',
    inReplyTo: ourReply,
  });
  t.same(stranger.conversationIds, [conversationId], 'the message is kept on the thread');
  await a.receiver.waitFor((r) => r.filter((x) => x.json.type === 'outreach.conversation_status_changed').length === 2, 15_000);
  const decided = (await a.conversationEvents(conversationId)).filter((e) => e.type === 'AgentTriaged').at(-1)!;
  t.match(decided.data, { outcome: 'needs_human', reasons: ['opt_out_phrase', 'not_the_contact'] });
  const last = envelopes(a.receiver, 'outreach.conversation_status_changed')[1]!;
  t.match(last.data, { conversationId, newStatus: 'awaiting_human', resolutionOutcome: 'needs_human' }, 'a person decides, not declined/opted_out');
  const suppressed = envelopes(a.receiver, 'outreach.contact_suppressed').map((e) => (e.data as { email: string }).email);
  t.same(suppressed, ['mallory@evil.example'], "the stranger's own opt-out is honoured, the contact is not suppressed");
  const recorded = (await a.h.app.services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'ContactSuppressed');
  t.match(recorded.at(-1)!.metadata, { workerId: String, workerInstance: String }, "the agent's suppression names its worker, as its other events do (from an audit)");
  t.equal(a.sink.received.length, 1, 'no mail to the stranger');

  const fromContact = await a.pitch({
    subject: 'Re: Quick link suggestion for your SEO article',
    bodyText: 'Thanks!',
    messageId: '<thanks-3@prospect.io>',
    inReplyTo: ourReply,
  });
  t.same(fromContact.conversationIds, [conversationId]);
  t.equal(fromContact.aiPaused, true, "the contact's own message now waits for the person too (awaiting_human)");
});
