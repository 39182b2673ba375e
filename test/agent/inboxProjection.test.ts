import t from 'tap';
import { inboxProjection } from '../../src/projections/inbox.ts';
import { CONVERSATIONS, type ConversationDoc, getConversation } from '../../src/readModels/conversations.ts';
import { findThread } from '../../src/readModels/messageThreads.ts';
import { MESSAGES, type MessageDoc } from '../../src/readModels/messages.ts';
import { projectEvents } from '../helpers/projectionSpec.ts';
import { startAgentHarness } from './helpers.ts';

t.test('inbox projection: the agent’s reply, the status history and the thread index; replayed twice, the same documents', async (t) => {
  const a = await startAgentHarness();
  t.teardown(() => a.close());
  const { services } = a.h.app;
  const r = await a.pitch({ messageId: '<proj-1@prospect.io>' });
  const id = r.conversationIds[0]!;
  await a.waitForEvent(id, 'ConversationStatusChanged');
  await services.projections.waitFor(await services.events.headPosition(), 5_000);

  const conversation = await getConversation(services.readModels, id);
  t.match(conversation, { status: 'resolved', handledBy: 'agent', messageCount: 2, lastTriage: { outcome: 'accept', classifier: 'offline-v1' } });
  t.match(conversation?.statusHistory, [{ from: 'open', to: 'resolved', by: 'agent', outcome: 'accept' }]);
  const messages = (await services.readModels.find<MessageDoc>(MESSAGES, {})).filter((m) => m.conversationIds.includes(id));
  const outbound = messages.find((m) => m.direction === 'outbound');
  t.match(outbound, { senderType: 'agent', to: 'jane@prospect.io', deliveryStatus: 'sent', inReplyTo: '<proj-1@prospect.io>' });
  t.ok(outbound?.mailProviderMessageId);
  const thread = await findThread(services.readModels, a.h.tenant.siteId, [outbound!.externalMessageId!]);
  t.equal(thread?.conversationId, id, "a prospect answering the agent's reply threads onto the conversation");

  const snapshot = async () => ({
    conversations: await services.readModels.find(CONVERSATIONS, {}, { sortBy: 'id' }),
    messages: await services.readModels.find(MESSAGES, {}, { sortBy: 'id' }),
  });
  const first = await snapshot();
  const events = await services.events.readAll({ limit: 100_000 });
  for (let round = 1; round <= 2; round++) {
    const cp = (await services.readModels.getCheckpoint(inboxProjection.name))!;
    await services.readModels.applyBatch(inboxProjection.name, inboxProjection.version, cp.position, cp.position, async (writerAt) => {
      for (const e of events) if (inboxProjection.canHandle(e.type)) await inboxProjection.handle(e, writerAt(e.position));
    });
    t.same(await snapshot(), first, `round ${round}: identical documents`);
  }
});

t.test("inbox projection: a conversation's times never go back, whatever order their stamps reach the log in", async (t) => {
  const a = await startAgentHarness();
  t.teardown(() => a.close());
  const { services } = a.h.app;
  const id = (await a.pitch({ messageId: '<order-1@prospect.io>' })).conversationIds[0]!;
  await a.waitForEvent(id, 'ReplySent');
  const followUp = (await a.pitch({ messageId: '<order-2@prospect.io>', inReplyTo: '<order-1@prospect.io>', bodyText: 'And one more thing.' })).conversationIds[0]!;
  t.equal(followUp, id, 'the follow-up joins the conversation');
  const all = (await services.events.readAll({ limit: 100_000 })).filter((e) => inboxProjection.canHandle(e.type));
  const at = (e: { data: unknown }) => (e.data as { occurredAt: number }).occurredAt;
  const ofConversation = all.filter((e) => JSON.stringify(e.data).includes(id));
  const ingested = ofConversation.filter((e) => e.type === 'MessageIngested');
  t.equal(ingested.length, 2);
  const opened = ofConversation.filter((e) => e.type === 'ConversationOpened');
  const agentsFirst = ofConversation.filter((e) => ['AgentTriaged', 'ReplyDrafted', 'ReplySendAttempted', 'ReplySent', 'ConversationStatusChanged'].includes(e.type) && at(e) < at(ingested[1]!));
  const replySent = agentsFirst.find((e) => e.type === 'ReplySent')!;
  // As when the agent's model calls took longer than the prospect's next mail: its stamps (taken
  // before) reach the log after the follow-up's. And the reply's outcome is the last change.
  const sequence = [...opened, ingested[0]!, ingested[1]!, ...agentsFirst.filter((e) => e !== replySent), replySent];
  const { store } = await projectEvents(t, inboxProjection, sequence.map((e) => ({ type: e.type, data: e.data })));
  const conversation = (await store.get<ConversationDoc>(CONVERSATIONS, id))!;
  const iso = (ms: number) => new Date(ms).toISOString();
  t.equal(conversation.lastMessageAt, iso(at(ingested[1]!)), "lastMessageAt is the follow-up's time, not the agent's earlier reply's");
  t.equal(conversation.updatedAt, iso(at(ingested[1]!)), "updatedAt is the latest change's time: the follow-up's, not the agent's later-logged earlier stamps");
  t.equal(conversation.messageCount, 3);

  // The reply's outcome, stamped after everything else (sent, then a failed attempt's record): each moves updatedAt, not lastMessageAt.
  for (const type of ['ReplySent', 'ReplySendFailed'] as const) {
    const outcome = type === 'ReplySent' ? replySent.data : { ...(replySent.data as object), attempt: 1, error: 'x', retryAt: null, permanent: true };
    const late = { type, data: { ...(outcome as object), occurredAt: at(ingested[1]!) + 5_000 } };
    const withOutcome = await projectEvents(t, inboxProjection, [...sequence.filter((e) => e !== replySent).map((e) => ({ type: e.type, data: e.data })), late]);
    const after = (await withOutcome.store.get<ConversationDoc>(CONVERSATIONS, id))!;
    t.equal(after.updatedAt, iso(at(ingested[1]!) + 5_000), `${type} moves updatedAt`);
    t.equal(after.lastMessageAt, iso(at(ingested[1]!)), `${type} leaves lastMessageAt`);
  }
});
