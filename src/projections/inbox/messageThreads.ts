import type { ProjectionWriter } from '../../ports/readModelStore.ts';
import { CONVERSATIONS, type ConversationDoc } from '../../readModels/conversations.ts';
import { MESSAGE_THREADS, type MessageThreadDoc, messageThreadId } from '../../readModels/messageThreads.ts';
import type { InboxEvent } from './inboxEvent.ts';

/**
 * The threading index: RFC Message-Id → conversation, for every inbound message that has one and
 * every reply we draft, so a prospect answering either threads into the same conversation.
 */
export async function applyToMessageThreads(event: InboxEvent, w: ProjectionWriter): Promise<void> {
  switch (event.type) {
    case 'MessageIngested': {
      const d = event.data;
      const first = d.conversationIds[0];
      if (!d.externalMessageId || !first) return;
      const thread: MessageThreadDoc = {
        id: messageThreadId(d.siteId, d.externalMessageId),
        siteId: d.siteId,
        conversationId: first,
        opportunityId: d.opportunityIds[0]!,
        entrySource: d.entrySource,
      };
      return w.put(MESSAGE_THREADS, thread);
    }
    case 'ReplyDrafted': {
      const r = event.data;
      const conversation = await w.get<ConversationDoc>(CONVERSATIONS, r.conversationId);
      if (!conversation) return;
      const thread: MessageThreadDoc = {
        id: messageThreadId(r.siteId, r.rfcMessageId),
        siteId: r.siteId,
        conversationId: r.conversationId,
        opportunityId: conversation.opportunityId,
        entrySource: conversation.entrySource,
      };
      return w.put(MESSAGE_THREADS, thread);
    }
    default:
      return;
  }
}
