import type { IngestionEvent } from '../domain/ingestion.ts';
import type { RecordedEvent } from '../ports/eventStore.ts';
import { AGENT_DISPATCHES, type AgentDispatchDoc } from '../readModels/agentDispatches.ts';
import { CONVERSATIONS, type ConversationDoc } from '../readModels/conversations.ts';
import { MESSAGE_THREADS, type MessageThreadDoc, messageThreadId } from '../readModels/messageThreads.ts';
import { MESSAGES, type MessageDoc } from '../readModels/messages.ts';
import { OPPORTUNITIES, type OpportunityDoc } from '../readModels/opportunities.ts';
import { applyConversationEvent } from './conversationLifecycle.ts';
import { type Projection, handles } from './projection.ts';
import type { ConversationEvent } from '../domain/conversation.ts';
import { normaliseEmail } from '../domain/email.ts';

const CONVERSATION_EVENT_TYPES = [
  'ConversationReopened',
  'AgentTriaged',
  'AgentSkipped',
  'ReplyDrafted',
  'ReplySendFailed',
  'ReplySent',
  'ConversationStatusChanged',
  'ConversationTakenOver',
  'ConversationHandedBack',
  'ConversationMarkedRead',
  'ConversationMarkedUnread',
] as const satisfies readonly ConversationEvent['type'][];
const CONVERSATION_EVENTS = new Set<string>(CONVERSATION_EVENT_TYPES);

const iso = (ms: number) => new Date(ms).toISOString();

/** The Outreach Agent's inbox: conversations, their messages, opportunities and pending dispatches. */
export const inboxProjection: Projection = {
  name: 'inbox',
  version: 4,
  collections: [CONVERSATIONS, OPPORTUNITIES, MESSAGES, MESSAGE_THREADS, AGENT_DISPATCHES],
  canHandle: handles(['ConversationOpened', 'MessageIngested', 'AgentDispatchRequested', ...CONVERSATION_EVENT_TYPES]),
  async handle(recorded, w) {
    if (CONVERSATION_EVENTS.has(recorded.type)) return applyConversationEvent(recorded as RecordedEvent & ConversationEvent, w);
    const event = recorded as RecordedEvent & IngestionEvent;
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
          contactEmailKey: normaliseEmail(d.contactEmail),
          contactName: d.contactName,
          subject: d.subject,
          aiPaused: d.aiPaused,
          skipReason: d.skipReason,
          messageCount: 0,
          lastMessageAt: iso(d.occurredAt),
          updatedAt: iso(d.occurredAt),
          createdAt: iso(d.occurredAt),
          handledBy: 'agent',
          lastTriage: null,
          statusHistory: [],
          unread: false,
          lastInboundMessageId: null,
        };
        const ask = d.ask ?? { targetUrl: '', anchorText: null, suggestedSentence: null, sourceUrl: null };
        const opportunity: OpportunityDoc = {
          id: d.opportunityId,
          siteId: d.siteId,
          teamId: d.teamId,
          conversationId: d.conversationId,
          entrySource: d.entrySource,
          ...ask,
          stub: d.ask === null,
          createdAt: iso(d.occurredAt),
        };
        await w.put(CONVERSATIONS, conversation);
        await w.put(OPPORTUNITIES, opportunity);
        return;
      }
      case 'MessageIngested': {
        const d = event.data;
        const message: MessageDoc = {
          id: d.messageId,
          siteId: d.siteId,
          teamId: d.teamId,
          conversationIds: d.conversationIds,
          direction: d.direction,
          senderType: d.senderType,
          from: d.from,
          fromName: d.fromName,
          subject: d.subject,
          bodyText: d.bodyText,
          bodyHtml: d.bodyHtml,
          externalMessageId: d.externalMessageId,
          inReplyTo: d.inReplyTo,
          references: d.references,
          channel: d.channel,
          receivedAt: iso(d.occurredAt),
        };
        await w.put(MESSAGES, message);
        const first = d.conversationIds[0];
        if (d.externalMessageId && first) {
          const thread: MessageThreadDoc = {
            id: messageThreadId(d.siteId, d.externalMessageId),
            siteId: d.siteId,
            conversationId: first,
            opportunityId: d.opportunityIds[0]!,
            entrySource: d.entrySource,
          };
          await w.put(MESSAGE_THREADS, thread);
        }
        for (const conversationId of d.conversationIds) {
          const conversation = await w.get<ConversationDoc>(CONVERSATIONS, conversationId);
          if (conversation) {
            await w.put(CONVERSATIONS, {
              ...conversation,
              messageCount: conversation.messageCount + 1,
              lastMessageAt: iso(d.occurredAt),
              updatedAt: iso(d.occurredAt),
              aiPaused: d.aiPaused,
              skipReason: d.skipReason,
              unread: true,
              lastInboundMessageId: d.messageId,
            });
          }
        }
        return;
      }
      case 'AgentDispatchRequested': {
        const d = event.data;
        const doc: AgentDispatchDoc = {
          id: d.dispatchId,
          siteId: d.siteId,
          conversationId: d.conversationId,
          messageId: d.messageId,
          status: 'requested',
          requestedAt: iso(d.occurredAt),
        };
        return w.put(AGENT_DISPATCHES, doc);
      }
    }
  },
};
