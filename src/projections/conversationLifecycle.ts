import type { ConversationEvent } from '../domain/conversation.ts';
import { normaliseMessageId } from '../domain/ingestion.ts';
import type { ProjectionWriter } from '../ports/readModelStore.ts';
import { AGENT_DISPATCHES, type AgentDispatchDoc } from '../readModels/agentDispatches.ts';
import { CONVERSATIONS, type ConversationDoc } from '../readModels/conversations.ts';
import { MESSAGE_THREADS, type MessageThreadDoc, messageThreadId } from '../readModels/messageThreads.ts';
import { MESSAGES, type MessageDoc } from '../readModels/messages.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The inbox read models after ingestion: the agent's decisions on each dispatch, outbound replies
 * as message records (and in the threading index, so a prospect answering our reply threads), status
 * changes with their history, and whether a person has taken the conversation over.
 */
export async function applyConversationEvent(event: ConversationEvent, w: ProjectionWriter): Promise<void> {
  const d = event.data;
  const conversation = await w.get<ConversationDoc>(CONVERSATIONS, d.conversationId);
  const putConversation = (changes: Partial<ConversationDoc>) =>
    conversation ? w.put(CONVERSATIONS, { ...conversation, ...changes, updatedAt: iso(d.occurredAt) }) : Promise.resolve();
  const history = conversation?.statusHistory ?? [];
  switch (event.type) {
    case 'AgentTriaged':
    case 'AgentSkipped': {
      const dispatch = await w.get<AgentDispatchDoc>(AGENT_DISPATCHES, event.data.dispatchId);
      if (dispatch) {
        await w.put(AGENT_DISPATCHES, {
          ...dispatch,
          status: event.type === 'AgentTriaged' ? 'triaged' : 'skipped',
          ...(event.type === 'AgentTriaged' ? { outcome: event.data.outcome } : { skipReason: event.data.reason }),
          handledAt: iso(d.occurredAt),
        });
      }
      if (event.type === 'AgentTriaged') await putConversation({ lastTriage: { outcome: event.data.outcome, classifier: event.data.classifier } });
      return;
    }
    case 'ReplyDrafted': {
      const r = event.data;
      const message: MessageDoc = {
        id: r.messageId,
        siteId: r.siteId,
        teamId: r.teamId,
        conversationIds: [r.conversationId],
        direction: 'outbound',
        senderType: r.senderType,
        from: r.from.address,
        fromName: r.from.name,
        to: r.to.address,
        subject: r.subject,
        bodyText: r.bodyText,
        bodyHtml: null,
        externalMessageId: normaliseMessageId(r.rfcMessageId),
        inReplyTo: r.inReplyTo,
        references: r.references.join(' ') || null,
        channel: 'smtp',
        receivedAt: iso(r.occurredAt),
        deliveryStatus: 'sending',
        mailProviderMessageId: null,
        sentAt: null,
        lastError: null,
      };
      await w.put(MESSAGES, message);
      if (conversation) {
        const thread: MessageThreadDoc = {
          id: messageThreadId(r.siteId, r.rfcMessageId),
          siteId: r.siteId,
          conversationId: r.conversationId,
          opportunityId: conversation.opportunityId,
          entrySource: conversation.entrySource,
        };
        await w.put(MESSAGE_THREADS, thread);
        await putConversation({ messageCount: conversation.messageCount + 1, lastMessageAt: iso(r.occurredAt) });
      }
      return;
    }
    case 'ReplySent':
    case 'ReplySendFailed': {
      const message = await w.get<MessageDoc>(MESSAGES, event.data.messageId);
      if (!message) return;
      if (event.type === 'ReplySent') {
        await w.put(MESSAGES, { ...message, deliveryStatus: 'sent', mailProviderMessageId: event.data.mailProviderMessageId, sentAt: iso(d.occurredAt), lastError: null });
      } else {
        await w.put(MESSAGES, { ...message, deliveryStatus: event.data.retryAt === null ? 'failed' : 'retrying', lastError: event.data.error });
      }
      return;
    }
    case 'ConversationStatusChanged': {
      const c = event.data;
      return putConversation({
        status: c.newStatus,
        statusHistory: [...history, { from: c.oldStatus, to: c.newStatus, by: c.resolvedBy, outcome: c.resolutionOutcome, at: iso(c.occurredAt) }],
      });
    }
    case 'ConversationReopened': {
      const c = event.data;
      return putConversation({
        status: 'open',
        statusHistory: [...history, { from: c.oldStatus, to: 'open', by: c.reason === 'user' ? 'user' : 'recipient', outcome: null, at: iso(c.occurredAt) }],
      });
    }
    case 'ConversationTakenOver':
      return putConversation({ handledBy: 'human' });
    case 'ConversationHandedBack':
      return putConversation({ handledBy: 'agent' });
    case 'ConversationMarkedRead': {
      // Read up to an older message than the latest (one arrived meanwhile): still unread.
      const latest = conversation?.lastInboundMessageId ?? null;
      if (latest !== null && latest !== event.data.upToMessageId) return;
      return putConversation({ unread: false });
    }
    case 'ConversationMarkedUnread':
      return putConversation({ unread: true });
    case 'ReplySendAttempted':
      return;
    default: {
      const never: never = event;
      return never;
    }
  }
}
