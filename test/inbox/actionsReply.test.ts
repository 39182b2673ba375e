import t from 'tap';
import { configureAgent } from '../../src/commands/agents.ts';
import { bouncedMessageId } from '../../src/domain/bounceAddress.ts';
import { getMessage } from '../../src/readModels/messages.ts';
import { envelopes, startAgentHarness } from '../agent/helpers.ts';
import { expectError, settle } from '../helpers/http.ts';
import { act } from './actionsHelpers.ts';

// `ready: false`: the agent is off, so every mail the sink gets is the person's.

t.test("a person's reply reaches the SMTP sink on the prospect's thread, is an outbound message of sender type user, and is not announced as reply_sent (the spec's: 'the agent sends a reply')", async (t) => {
  const a = await startAgentHarness({ ready: false });
  t.teardown(() => a.close());
  await configureAgent(a.h.app.services, { siteId: a.h.tenant.siteId, agentKey: 'outreach', changes: { senderName: 'Ana at Example' } });
  const { conversationIds, aiPaused } = await a.pitch({ messageId: '<person-1@prospect.io>', references: '<older@prospect.io>' });
  t.equal(aiPaused, true, 'the agent does not answer');
  const id = conversationIds[0]!;

  const res = await act(a.h.app.fastify, a.h.tenant, id, 'reply', { text: 'Hi Jane,\n\nHappy to add it next week.\n\nAna' });
  t.equal(res.statusCode, 201);
  const { message, conversation } = res.json();
  t.match(message, { id: /^[0-9A-Z]{26}$/, rfcMessageId: /^<reply\.[0-9a-z]{26}@example\.test>$/, deliveryStatus: 'sent' });
  t.same(conversation, { id, status: 'open', handledBy: 'agent', unread: true });

  t.equal(a.sink.received.length, 1, 'one mail');
  const mail = a.sink.received[0]!;
  t.same(mail.rcptTo, ['jane@prospect.io']);
  t.same(mail.parsed.from?.value[0], { name: 'Ana at Example', address: 'outreach@example.test' });
  t.equal(bouncedMessageId(a.h.app.services.secrets, mail.mailFrom, a.h.app.services.config.MAIL_DOMAIN), message.id, "bounces return to this reply's own bounce address");
  t.equal(mail.parsed.messageId, message.rfcMessageId);
  t.equal(mail.parsed.inReplyTo, '<person-1@prospect.io>');
  t.same(mail.parsed.references, ['<older@prospect.io>', '<person-1@prospect.io>']);
  t.equal(mail.parsed.subject, 'Re: Quick link suggestion for your SEO article');
  t.match(mail.parsed.text, /Happy to add it next week/);

  const events = await a.conversationEvents(id);
  t.same(events.map((e) => e.type), ['ReplyDrafted', 'ReplySendAttempted', 'ReplySent']);
  t.match(events[0]!.data, { messageId: message.id, senderType: 'user', triage: 'manual', dispatchId: null, direction: 'outbound', drafter: 'user' });
  t.match(events[2]!.data, { senderType: 'user', triage: 'manual', autoResolved: false, attempt: 1 });
  const doc = await getMessage(a.h.app.services.readModels, message.id);
  t.match(doc, { direction: 'outbound', senderType: 'user', deliveryStatus: 'sent', to: 'jane@prospect.io', conversationIds: [id] });

  // A later change that is announced: once its delivery is scheduled, the dispatcher has passed the reply.
  t.equal((await act(a.h.app.fastify, a.h.tenant, id, 'status', { status: 'resolved' })).statusCode, 200);
  await a.receiver.waitFor((r) => r.some((x) => x.json.type === 'outreach.conversation_status_changed'));
  const scheduled = (await a.h.app.services.events.readAll({ types: ['DeliveryScheduled'], limit: 10_000 })).map((e) => (e.data as { eventType: string }).eventType);
  t.same(scheduled.filter((type) => type === 'outreach.reply_sent'), [], 'no reply_sent delivery scheduled for it');
  t.same(envelopes(a.receiver, 'outreach.reply_sent'), []);
  t.match(envelopes(a.receiver, 'outreach.conversation_status_changed')[0]!.data, { conversationId: id, newStatus: 'resolved', resolvedBy: 'user' }, "the person's status change is");

  const custom = await act(a.h.app.fastify, a.h.tenant, id, 'reply', { text: 'One more thing.', subject: 'About the link' });
  t.equal(custom.statusCode, 201, 'without an Idempotency-Key every call is a new reply');
  t.equal(a.sink.received.length, 2);
  t.equal(a.sink.received[1]!.parsed.subject, 'About the link');
});

t.test('Idempotency-Key: a retried reply is sent once and answered 200 with the same message; another text under the key is 409', async (t) => {
  const a = await startAgentHarness({ ready: false });
  t.teardown(() => a.close());
  const id = (await a.pitch({ messageId: '<idem-1@prospect.io>' })).conversationIds[0]!;
  const body = { text: 'Sent once, whatever the retries.' };
  const headers = { 'idempotency-key': 'reply-42' };

  const first = await act(a.h.app.fastify, a.h.tenant, id, 'reply', body, headers);
  t.equal(first.statusCode, 201);
  const [second, third] = await Promise.all([
    act(a.h.app.fastify, a.h.tenant, id, 'reply', body, headers),
    act(a.h.app.fastify, a.h.tenant, id, 'reply', body, headers),
  ]);
  for (const r of [second, third]) {
    t.equal(r.statusCode, 200, 'a repeat answers 200');
    t.same(r.json().message, first.json().message, 'with the same message');
  }
  t.equal(a.sink.received.length, 1, 'one mail reached the sink');
  t.equal((await a.conversationEvents(id)).filter((e) => e.type === 'ReplyDrafted').length, 1);
  expectError(t, await act(a.h.app.fastify, a.h.tenant, id, 'reply', { text: 'Something else' }, headers), 409, 'IDEMPOTENCY_KEY_REUSED');
  expectError(t, await act(a.h.app.fastify, a.h.tenant, id, 'reply', { ...body, subject: 'Another subject' }, headers), 409, 'IDEMPOTENCY_KEY_REUSED');
  // The prospect writes again under another subject: the thread's subject moves on, and a retry of the
  // same request (its first answer lost, say) is still the same request (it was 409).
  const newer = await a.pitch({ subject: 'Another subject', messageId: '<idem-2@prospect.io>', inReplyTo: '<idem-1@prospect.io>', bodyText: 'Any news?' });
  t.same(newer.conversationIds, [id]);
  await settle(a.h.app.services);
  const later = await act(a.h.app.fastify, a.h.tenant, id, 'reply', body, headers);
  t.equal(later.statusCode, 200, later.body);
  t.same(later.json().message, first.json().message);
  expectError(t, await act(a.h.app.fastify, a.h.tenant, id, 'reply', { text: 'Something else' }, headers), 409, 'IDEMPOTENCY_KEY_REUSED');
  expectError(t, await act(a.h.app.fastify, a.h.tenant, id, 'reply', body, { 'idempotency-key': 'has spaces' }), 400, 'VALIDATION_ERROR');
  const other = await act(a.h.app.fastify, a.h.tenant, id, 'reply', body, { 'idempotency-key': 'reply-43' });
  t.equal(other.statusCode, 201, 'another key is another reply');
  t.equal(a.sink.received.length, 2);
});

t.test('a temporary failure is answered as retrying and the agent worker retries it from the log', async (t) => {
  let refusals = 1;
  const a = await startAgentHarness({
    ready: false,
    sink: { data: () => (refusals-- > 0 ? { code: 451, message: '4.3.0 try again later' } : null) },
  });
  t.teardown(() => a.close());
  const id = (await a.pitch({ messageId: '<retry-1@prospect.io>' })).conversationIds[0]!;
  const res = await act(a.h.app.fastify, a.h.tenant, id, 'reply', { text: 'Second time lucky.' });
  t.equal(res.statusCode, 201);
  t.equal(res.json().message.deliveryStatus, 'retrying');
  const sent = await a.waitForEvent(id, 'ReplySent');
  t.match(sent.data, { attempt: 2, senderType: 'user', triage: 'manual' });
  t.same((await a.conversationEvents(id)).map((e) => e.type), ['ReplyDrafted', 'ReplySendAttempted', 'ReplySendFailed', 'ReplySendAttempted', 'ReplySent']);
  t.equal(a.sink.received.length, 1, 'accepted once');
  t.equal(a.sink.received[0]!.parsed.messageId, res.json().message.rfcMessageId, 'the retry sends the same Message-Id');
});

t.test('a permanent failure: failed, and the conversation goes to a person (awaiting_human, resolvedBy user)', async (t) => {
  const a = await startAgentHarness({ ready: false, sink: { rcpt: () => ({ code: 550, message: '5.1.1 no such user' }) } });
  t.teardown(() => a.close());
  const id = (await a.pitch({ messageId: '<perm-1@prospect.io>' })).conversationIds[0]!;
  const res = await act(a.h.app.fastify, a.h.tenant, id, 'reply', { text: 'This will bounce.' });
  t.equal(res.statusCode, 201);
  t.equal(res.json().message.deliveryStatus, 'failed');
  t.equal(res.json().conversation.status, 'awaiting_human');
  const changed = (await a.conversationEvents(id)).find((e) => e.type === 'ConversationStatusChanged')!;
  t.match(changed.data, { newStatus: 'awaiting_human', resolvedBy: 'user', resolutionOutcome: 'send_failed' });
});
