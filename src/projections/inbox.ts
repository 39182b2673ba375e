import { parseEvent } from '../lib/parseEvent.ts';
import { AGENT_DISPATCHES } from '../readModels/agentDispatches.ts';
import { CONVERSATIONS } from '../readModels/conversations.ts';
import { MESSAGE_THREADS } from '../readModels/messageThreads.ts';
import { CONVERSATION_MESSAGES, MESSAGES } from '../readModels/messages.ts';
import { OPPORTUNITIES } from '../readModels/opportunities.ts';
import { applyToAgentDispatches } from './inbox/agentDispatches.ts';
import { applyToConversations } from './inbox/conversations.ts';
import { type InboxEvent, inboxEventSchemas } from './inbox/inboxEvent.ts';
import { applyToMessageThreads } from './inbox/messageThreads.ts';
import { applyToMessages } from './inbox/messages.ts';
import { applyProposalToOpportunities, applyToOpportunities } from './inbox/opportunities.ts';
import { agentRunEventSchemas } from '../domain/eventSchemas.ts';
import { type Projection, handles } from './projection.ts';

const INBOX_EVENT_TYPES = [
  'ConversationOpened',
  'OutboundConversationStarted',
  'MessageIngested',
  'AgentDispatchRequested',
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
] as const satisfies readonly InboxEvent['type'][];

/**
 * The Outreach Agent's inbox: one projection (one checkpoint, rebuilt together) over six read
 * models, each built by its own handler in `inbox/`. The agents' proposals (`OpportunityProposed`)
 * are opportunities too. Version 7: opportunities have a `kind` and `details`, and
 * `conversationMessages` links each conversation to its messages. Version 8: a conversation's
 * `updatedAt` and `lastMessageAt` never go back, and a reply's outcome moves `updatedAt`.
 */
export const inboxProjection: Projection = {
  name: 'inbox',
  version: 8,
  collections: [CONVERSATIONS, OPPORTUNITIES, MESSAGES, CONVERSATION_MESSAGES, MESSAGE_THREADS, AGENT_DISPATCHES],
  canHandle: handles([...INBOX_EVENT_TYPES, 'OpportunityProposed']),
  async handle(recorded, w) {
    if (recorded.type === 'OpportunityProposed') {
      const proposed = parseEvent(recorded, agentRunEventSchemas);
      if (proposed?.type === 'OpportunityProposed') await applyProposalToOpportunities(proposed, w);
      return;
    }
    const event = parseEvent(recorded, inboxEventSchemas);
    if (!event) return;
    await applyToConversations(event, w);
    await applyToOpportunities(event, w);
    await applyToMessages(event, w);
    await applyToMessageThreads(event, w);
    await applyToAgentDispatches(event, w);
  },
};
