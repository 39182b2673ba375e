import t from 'tap';
import { getConversation } from '../../src/readModels/conversations.ts';
import { envelopes, startAgentHarness } from '../agent/helpers.ts';
import { independentlyVerify } from '../webhooks/helpers.ts';
import { act } from './actionsHelpers.ts';

t.test('status: a person resolves, reopens and hands to a human; each is one event and the terminal ones a signed webhook with resolvedBy user', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const { conversationIds } = await a.pitch({ messageId: '<status-1@prospect.io>' });
  const id = conversationIds[0]!;
  const who = a.h.tenant;

  const resolved = await act(a.h.app.fastify, who, id, 'status', { status: 'resolved' });
  t.equal(resolved.statusCode, 200);
  t.same(resolved.json(), { conversation: { id, status: 'resolved', handledBy: 'agent', unread: true } });
  const again = await act(a.h.app.fastify, who, id, 'status', { status: 'resolved' });
  t.equal(again.statusCode, 200, 'a repeat answers with the current state');
  t.equal(again.json().conversation.status, 'resolved');

  const reopened = await act(a.h.app.fastify, who, id, 'status', { status: 'open' });
  t.equal(reopened.json().conversation.status, 'open');
  const waiting = await act(a.h.app.fastify, who, id, 'status', { status: 'awaiting_human', resolutionOutcome: 'needs_pricing' });
  t.equal(waiting.json().conversation.status, 'awaiting_human');

  const events = await a.conversationEvents(id);
  t.same(events.map((e) => e.type), ['ConversationStatusChanged', 'ConversationReopened', 'ConversationStatusChanged'], 'the repeat recorded nothing');
  t.match(events[0]!.data, { oldStatus: 'open', newStatus: 'resolved', resolvedBy: 'user', resolutionOutcome: 'manual' });
  t.match(events[1]!.data, { oldStatus: 'resolved', reason: 'user' });
  t.match(events[2]!.data, { oldStatus: 'open', newStatus: 'awaiting_human', resolvedBy: 'user', resolutionOutcome: 'needs_pricing' });

  await a.receiver.waitFor((r) => r.filter((x) => x.json.type === 'outreach.conversation_status_changed').length === 2);
  const sent = envelopes(a.receiver, 'outreach.conversation_status_changed');
  t.same(sent[0]!.data, { conversationId: id, oldStatus: 'open', newStatus: 'resolved', resolvedBy: 'user', resolutionOutcome: 'manual' });
  t.same(sent[1]!.data, { conversationId: id, oldStatus: 'open', newStatus: 'awaiting_human', resolvedBy: 'user', resolutionOutcome: 'needs_pricing' });
  for (const r of a.receiver.received) t.ok(independentlyVerify(r, a.secret), 'signed');
  const doc = await getConversation(a.h.app.services.readModels, id);
  t.same(doc!.statusHistory!.map((h) => [h.from, h.to, h.by]), [['open', 'resolved', 'user'], ['resolved', 'open', 'user'], ['open', 'awaiting_human', 'user']]);
});

t.test('take over: the agent skips the pitch and a later prospect reply on the thread; hand back returns it to the agent', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const { conversationIds } = await a.pitch({ messageId: '<takeover-1@prospect.io>' });
  const id = conversationIds[0]!;
  const who = a.h.tenant;

  const taken = await act(a.h.app.fastify, who, id, 'takeover');
  t.equal(taken.statusCode, 200);
  t.same(taken.json().conversation, { id, status: 'open', handledBy: 'human', unread: true });
  t.equal((await act(a.h.app.fastify, who, id, 'takeover')).json().conversation.handledBy, 'human', 'a repeat answers 200 with the state');
  const headerOnly = await act(a.h.app.fastify, who, id, 'takeover', undefined, { 'content-type': 'application/json' });
  t.equal(headerOnly.statusCode, 200, 'a JSON content type with an empty body is no body, not an error');

  const agent = await a.startAgent();
  const reply = await a.pitch({
    subject: 'Re: Quick link suggestion for your SEO article',
    bodyText: 'Just following up: would you add the link? Thanks, Jane',
    messageId: '<takeover-2@prospect.io>',
    inReplyTo: '<takeover-1@prospect.io>',
  });
  t.same(reply.conversationIds, [id], 'threaded onto the taken-over conversation');
  t.match(reply, { aiPaused: true, skipReason: 'taken_over' }, 'the agent will not act on the reply: not dispatched');
  t.ok(await agent.worker.waitForPosition(await a.h.app.services.events.headPosition(), 10_000));
  const events = await a.conversationEvents(id);
  t.same(events.map((e) => e.type), ['ConversationTakenOver', 'AgentSkipped'], "one take-over; the pitch's dispatch skipped");
  t.equal(events[0]!.data.by, a.h.tenant.keyId, 'by: the credential');
  t.same(events.slice(1).map((e) => e.data.reason), ['taken_over']);
  t.equal(a.sink.received.length, 0, 'the agent sent nothing');

  const back = await act(a.h.app.fastify, who, id, 'handback');
  t.same(back.json().conversation, { id, status: 'open', handledBy: 'agent', unread: true });
  await act(a.h.app.fastify, who, id, 'handback');
  const after = (await a.conversationEvents(id)).map((e) => e.type);
  t.same(after.slice(2), ['ConversationHandedBack'], 'one hand-back for two calls');
});

t.test('read / unread: idempotent marks; a new inbound message makes it unread again, a reply of ours does not', async (t) => {
  const a = await startAgentHarness({ startAgent: false, ready: false });
  t.teardown(() => a.close());
  const { conversationIds } = await a.pitch({ messageId: '<read-1@prospect.io>' });
  const id = conversationIds[0]!;
  const who = a.h.tenant;
  const readModels = a.h.app.services.readModels;
  t.equal((await getConversation(readModels, id))!.unread, true, 'a new conversation is unread');

  const read = await act(a.h.app.fastify, who, id, 'read');
  t.equal(read.statusCode, 200);
  t.equal(read.json().conversation.unread, false);
  t.equal((await act(a.h.app.fastify, who, id, 'read')).json().conversation.unread, false);
  const unread = await act(a.h.app.fastify, who, id, 'unread');
  t.equal(unread.json().conversation.unread, true);
  t.equal((await act(a.h.app.fastify, who, id, 'unread')).json().conversation.unread, true);
  t.equal((await act(a.h.app.fastify, who, id, 'read')).json().conversation.unread, false);

  const marks = (await a.conversationEvents(id)).filter((e) => e.type.startsWith('ConversationMarked'));
  t.same(marks.map((e) => e.type), ['ConversationMarkedRead', 'ConversationMarkedUnread', 'ConversationMarkedRead'], 'repeats recorded nothing');
  const first = marks[0]!.data;
  t.equal(first.upToMessageId, (await getConversation(readModels, id))!.lastInboundMessageId, 'read up to the latest inbound message');
  t.equal(first.by, a.h.tenant.keyId);

  const replied = await act(a.h.app.fastify, who, id, 'reply', { text: 'Hello from a person.' });
  t.equal(replied.statusCode, 201);
  t.equal(replied.json().conversation.unread, false, 'our own reply leaves it read');

  await a.pitch({ subject: 'Re: hi', bodyText: 'Any news?', messageId: '<read-2@prospect.io>', inReplyTo: '<read-1@prospect.io>' });
  t.equal((await getConversation(readModels, id))!.unread, true, 'the prospect writing again makes it unread');
  const readAgain = await act(a.h.app.fastify, who, id, 'read');
  t.equal(readAgain.json().conversation.unread, false, 'marking read again names the newer message and records it');
});
