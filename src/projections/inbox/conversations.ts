import type { ProjectionWriter } from '../../ports/readModelStore.ts';
import { CONVERSATIONS, type ConversationDoc } from '../../readModels/conversations.ts';
import { type InboxEvent, iso } from './inboxEvent.ts';

/** Conversations: opened by ingestion, counted per message, then the agent's triage, status history and who handles it. */
export async function applyToConversations(event: InboxEvent, w: ProjectionWriter): Promise<void> {
  switch (event.type) {
    case 'ConversationOpened': {
      const d = event.data;
      const conversation: ConversationDoc = {
        id: d.conversationId,
        siteId: d.siteId,
        teamId: d.teamId,
        opportunityId: d.opportunityId,
        entrySource: d.entrySource,
        status: d.status,
        contactEmail: d.contactEmail,
        contactName: d.contactName,
        subject: d.subject,
        aiPaused: d.aiPaused,
        skipReason: d.skipReason,
        messageCount: 0,
        lastMessageAt: iso(d.occurredAt),
        createdAt: iso(d.occurredAt),
        handledBy: 'agent',
        lastTriage: null,
        statusHistory: [],
      };
      return w.put(CONVERSATIONS, conversation);
    }
    case 'MessageIngested': {
      const d = event.data;
      for (const conversationId of d.conversationIds) {
        await update(w, conversationId, (c) => ({
          messageCount: c.messageCount + 1,
          lastMessageAt: iso(d.occurredAt),
          aiPaused: d.aiPaused,
          skipReason: d.skipReason,
        }));
      }
      return;
    }
    case 'AgentTriaged':
      return update(w, event.data.conversationId, () => ({ lastTriage: { outcome: event.data.outcome, classifier: event.data.classifier } }));
    case 'ReplyDrafted':
      return update(w, event.data.conversationId, (c) => ({ messageCount: c.messageCount + 1, lastMessageAt: iso(event.data.occurredAt) }));
    case 'ConversationStatusChanged': {
      const d = event.data;
      return update(w, d.conversationId, (c) => ({
        status: d.newStatus,
        statusHistory: [...(c.statusHistory ?? []), { from: d.oldStatus, to: d.newStatus, by: d.resolvedBy, outcome: d.resolutionOutcome, at: iso(d.occurredAt) }],
      }));
    }
    case 'ConversationReopened': {
      const d = event.data;
      return update(w, d.conversationId, (c) => ({
        status: 'open',
        statusHistory: [...(c.statusHistory ?? []), { from: d.oldStatus, to: 'open', by: d.reason === 'user' ? 'user' : 'recipient', outcome: null, at: iso(d.occurredAt) }],
      }));
    }
    case 'ConversationTakenOver':
      return update(w, event.data.conversationId, () => ({ handledBy: 'human' }));
    case 'ConversationHandedBack':
      return update(w, event.data.conversationId, () => ({ handledBy: 'agent' }));
    default:
      return;
  }
}

/** Applies a change to a conversation the read model has; events for one it does not have change nothing. */
async function update(w: ProjectionWriter, id: string, change: (c: ConversationDoc) => Partial<ConversationDoc>): Promise<void> {
  const conversation = await w.get<ConversationDoc>(CONVERSATIONS, id);
  if (conversation) await w.put(CONVERSATIONS, { ...conversation, ...change(conversation) });
}
