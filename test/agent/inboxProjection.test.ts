import t from 'tap';
import { inboxProjection } from '../../src/projections/inbox.ts';
import { CONVERSATIONS, getConversation } from '../../src/readModels/conversations.ts';
import { findThread } from '../../src/readModels/messageThreads.ts';
import { MESSAGES, type MessageDoc } from '../../src/readModels/messages.ts';
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
