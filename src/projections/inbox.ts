import type { AgentEvent, AgentSettings } from '../domain/agents.ts';
import { DEFAULT_AGENT_SETTINGS } from '../domain/agents.ts';
import type { SkipReason } from '../domain/aiPause.ts';
import type { Ask, IngestionEvent } from '../domain/ingestion.ts';
import { normaliseMessageId } from '../domain/ingestion.ts';
import type { EntrySource } from '../domain/outreachEvents.ts';
import type { SuppressionEvent } from '../domain/suppression.ts';
import type { RecordedEvent } from '../ports/eventStore.ts';
import { type Projection, handles } from './projection.ts';

export interface ConversationDoc {
  [key: string]: unknown;
  id: string;
  siteId: string;
  teamId: string;
  opportunityId: string;
  entrySource: EntrySource;
  status: string;
  contactEmail: string;
  contactName: string | null;
  subject: string;
  aiPaused: boolean;
  skipReason: SkipReason | null;
  messageCount: number;
  lastMessageAt: string;
  createdAt: string;
}

export interface OpportunityDoc extends Ask {
  [key: string]: unknown;
  id: string;
  siteId: string;
  teamId: string;
  conversationId: string;
  entrySource: EntrySource;
  /** True for the stub created when no ask was extracted. */
  stub: boolean;
  createdAt: string;
}

export interface MessageDoc {
  [key: string]: unknown;
  id: string;
  siteId: string;
  teamId: string;
  conversationIds: string[];
  direction: 'inbound';
  senderType: 'recipient';
  from: string;
  fromName: string | null;
  subject: string;
  bodyText: string;
  bodyHtml: string | null;
  externalMessageId: string | null;
  inReplyTo: string | null;
  references: string | null;
  channel: string;
  receivedAt: string;
}

/** Threading index: `<siteId>|<Message-Id>` → the conversation the message belongs to. */
export interface MessageThreadDoc {
  [key: string]: unknown;
  id: string;
  siteId: string;
  conversationId: string;
  opportunityId: string;
  entrySource: EntrySource;
}
export const messageThreadId = (siteId: string, externalMessageId: string) => `${siteId}|${normaliseMessageId(externalMessageId)}`;

export interface AgentSettingsDoc extends AgentSettings {
  [key: string]: unknown;
  id: string;
  siteId: string;
  agentKey: string;
  updatedAt: string;
}
export const agentSettingsId = (siteId: string, agentKey: string) => `${siteId}|${agentKey}`;

export interface SuppressionDoc {
  [key: string]: unknown;
  id: string;
  teamId: string;
  email: string;
  reason: string;
  source: string;
  suppressedAt: string;
}
export const suppressionId = (teamId: string, email: string) => `${teamId}|${email}`;

export interface AgentDispatchDoc {
  [key: string]: unknown;
  id: string;
  siteId: string;
  conversationId: string;
  messageId: string;
  status: 'requested';
  requestedAt: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The Outreach Agent's inbox: conversations, their messages, opportunities and pending dispatches. */
export const inboxProjection: Projection = {
  name: 'inbox',
  version: 1,
  collections: ['conversations', 'opportunities', 'messages', 'messageThreads', 'agentDispatches'],
  canHandle: handles(['ConversationOpened', 'MessageIngested', 'AgentDispatchRequested']),
  async handle(recorded, w) {
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
          contactName: d.contactName,
          subject: d.subject,
          aiPaused: d.aiPaused,
          skipReason: d.skipReason,
          messageCount: 0,
          lastMessageAt: iso(d.occurredAt),
          createdAt: iso(d.occurredAt),
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
        await w.put('conversations', conversation);
        await w.put('opportunities', opportunity);
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
        await w.put('messages', message);
        const first = d.conversationIds[0];
        if (d.externalMessageId && first) {
          const thread: MessageThreadDoc = {
            id: messageThreadId(d.siteId, d.externalMessageId),
            siteId: d.siteId,
            conversationId: first,
            opportunityId: d.opportunityIds[0]!,
            entrySource: d.entrySource,
          };
          await w.put('messageThreads', thread);
        }
        for (const conversationId of d.conversationIds) {
          const conversation = await w.get<ConversationDoc>('conversations', conversationId);
          if (conversation) {
            await w.put('conversations', {
              ...conversation,
              messageCount: conversation.messageCount + 1,
              lastMessageAt: iso(d.occurredAt),
              aiPaused: d.aiPaused,
              skipReason: d.skipReason,
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
        return w.put('agentDispatches', doc);
      }
    }
  },
};

/** Agent settings per site and agent key (defaults apply to keys never configured). */
export const agentSettingsProjection: Projection = {
  name: 'agentSettings',
  version: 1,
  collections: ['agentSettings'],
  canHandle: handles(['AgentConfigured']),
  async handle(recorded, w) {
    const event = recorded as RecordedEvent & AgentEvent;
    const { siteId, agentKey, changes, configuredAt } = event.data;
    const id = agentSettingsId(siteId, agentKey);
    const current = await w.get<AgentSettingsDoc>('agentSettings', id);
    const doc: AgentSettingsDoc = {
      ...(current ?? { id, siteId, agentKey, ...DEFAULT_AGENT_SETTINGS }),
      ...changes,
      updatedAt: configuredAt,
    };
    await w.put('agentSettings', doc);
  },
};

/** The team-wide suppression list. */
export const suppressionsProjection: Projection = {
  name: 'suppressions',
  version: 1,
  collections: ['suppressions'],
  canHandle: handles(['ContactSuppressed']),
  async handle(recorded, w) {
    const event = recorded as RecordedEvent & SuppressionEvent;
    const { teamId, email, reason, source, occurredAt } = event.data;
    const doc: SuppressionDoc = { id: suppressionId(teamId, email), teamId, email, reason, source, suppressedAt: iso(occurredAt) };
    await w.put('suppressions', doc);
  },
};
