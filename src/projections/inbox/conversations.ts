import { normaliseEmail } from '../../domain/email.ts';
import type { ProjectionWriter } from '../../ports/readModelStore.ts';
import { CONVERSATIONS, type ConversationDoc } from '../../readModels/conversations.ts';
import { type InboxEvent, iso } from './inboxEvent.ts';

/**
 * Conversations: opened by ingestion, counted per message (a prospect's makes it unread), then the
 * agent's triage, status history, who handles it and the read marks. Every change moves `updatedAt`.
 */
export async function applyToConversations(event: InboxEvent, w: ProjectionWriter): Promise<void> {
  switch (event.type) {
    case 'ConversationOpened': {
      const d = event.data;
      return w.put(CONVERSATIONS, newConversation(d, { entrySource: d.entrySource, status: d.status, aiPaused: d.aiPaused, skipReason: d.skipReason }));
    }
    case 'OutboundConversationStarted': {
      const d = event.data;
      return w.put(CONVERSATIONS, newConversation(d, { entrySource: 'outbound_pitch', status: 'open', aiPaused: false, skipReason: null }));
    }
    case 'MessageIngested': {
      const d = event.data;
      for (const conversationId of d.conversationIds) {
        await update(w, conversationId, d.occurredAt, (c) => ({
          messageCount: c.messageCount + 1,
          lastMessageAt: later(c.lastMessageAt, iso(d.occurredAt)),
          aiPaused: d.aiPaused,
          skipReason: d.skipReason,
          unread: true,
          lastInboundMessageId: d.messageId,
        }));
      }
      return;
    }
    case 'AgentTriaged':
      return update(w, event.data.conversationId, event.data.occurredAt, () => ({ lastTriage: { outcome: event.data.outcome, classifier: event.data.classifier } }));
    case 'ReplyDrafted':
      for (const id of [event.data.conversationId, ...(event.data.answersFor ?? [])]) {
        await update(w, id, event.data.occurredAt, (c) => ({ messageCount: c.messageCount + 1, lastMessageAt: later(c.lastMessageAt, iso(event.data.occurredAt)) }));
      }
      return;
    // The reply's outcome changes its message (sent, retrying, failed): a change of the conversation.
    case 'ReplySent':
    case 'ReplySendFailed':
      return update(w, event.data.conversationId, event.data.occurredAt, () => ({}));
    case 'ConversationStatusChanged': {
      const d = event.data;
      return update(w, d.conversationId, d.occurredAt, (c) => ({
        ...(d.newStatus !== 'awaiting_human' ? pauseEnded(c, 'awaiting_human') : {}),
        status: d.newStatus,
        statusHistory: [...(c.statusHistory ?? []), { from: d.oldStatus, to: d.newStatus, by: d.resolvedBy, outcome: d.resolutionOutcome, at: iso(d.occurredAt) }],
      }));
    }
    case 'ConversationReopened': {
      const d = event.data;
      return update(w, d.conversationId, d.occurredAt, (c) => ({
        ...pauseEnded(c, 'awaiting_human'),
        status: 'open',
        statusHistory: [...(c.statusHistory ?? []), { from: d.oldStatus, to: 'open', by: d.reason === 'user' ? 'user' : 'recipient', outcome: null, at: iso(d.occurredAt) }],
      }));
    }
    case 'ConversationTakenOver':
      return update(w, event.data.conversationId, event.data.occurredAt, () => ({ handledBy: 'human' }));
    case 'ConversationHandedBack':
      return update(w, event.data.conversationId, event.data.occurredAt, (c) => ({ ...pauseEnded(c, 'taken_over'), handledBy: 'agent' }));
    case 'ConversationMarkedRead': {
      const d = event.data;
      // Read up to an older message than the latest (one arrived meanwhile): still unread.
      return update(w, d.conversationId, d.occurredAt, (c) => {
        const latest = c.lastInboundMessageId ?? null;
        return latest !== null && latest !== d.upToMessageId ? null : { unread: false };
      });
    }
    case 'ConversationMarkedUnread':
      return update(w, event.data.conversationId, event.data.occurredAt, () => ({ unread: true }));
    default:
      return;
  }
}

/**
 * Applies a change to a conversation the read model has, stamping `updatedAt` with the event's time
 * (never earlier than it was: events are in log order, and their times, stamped by several processes,
 * need not be; a client syncing with `updatedAfter` must not miss a change); events for one it does
 * not have change nothing, nor does a change of null.
 */
async function update(w: ProjectionWriter, id: string, at: number, change: (c: ConversationDoc) => Partial<ConversationDoc> | null): Promise<void> {
  const conversation = await w.get<ConversationDoc>(CONVERSATIONS, id);
  if (!conversation) return;
  const changes = change(conversation);
  if (changes) await w.put(CONVERSATIONS, { ...conversation, ...changes, updatedAt: later(conversation.updatedAt, iso(at)) });
}

/** The later of two ISO 8601 UTC times as `iso` writes them (same form: they compare as strings). */
const later = (a: string, b: string) => (a > b ? a : b);

/** A conversation as it opens (a pitch ingested, or one the agent sent): no messages, no marks yet. */
function newConversation(
  d: { conversationId: string; siteId: string; teamId: string; opportunityId: string; contactEmail: string; contactName: ConversationDoc['contactName']; subject: string; occurredAt: number },
  how: Pick<ConversationDoc, 'entrySource' | 'status' | 'aiPaused' | 'skipReason'>,
): ConversationDoc {
  const at = iso(d.occurredAt);
  return {
    id: d.conversationId,
    siteId: d.siteId,
    teamId: d.teamId,
    opportunityId: d.opportunityId,
    entrySource: how.entrySource,
    status: how.status,
    contactEmail: d.contactEmail,
    contactEmailKey: normaliseEmail(d.contactEmail),
    contactName: d.contactName,
    subject: d.subject,
    aiPaused: how.aiPaused,
    skipReason: how.skipReason,
    messageCount: 0,
    lastMessageAt: at,
    updatedAt: at,
    createdAt: at,
    handledBy: 'agent',
    lastTriage: null,
    statusHistory: [],
    unread: false,
    lastInboundMessageId: null,
  };
}

/**
 * A conversation shows the pause of its latest inbound message; one for the conversation's own state
 * (a person has it, or it waits for one) ends with that state, so the agent acts on the next message.
 */
const pauseEnded = (c: ConversationDoc, reason: 'taken_over' | 'awaiting_human'): Partial<ConversationDoc> =>
  c.skipReason === reason ? { aiPaused: false, skipReason: null } : {};
