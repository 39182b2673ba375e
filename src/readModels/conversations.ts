import type { SkipReason } from '../domain/aiPause.ts';
import type { EntrySource } from '../domain/outreachEvents.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `conversations` read model, written by the inbox projection. */
export const CONVERSATIONS = 'conversations';

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
  /** Who handles it: the agent, or a person who took it over. */
  handledBy?: 'agent' | 'human';
  /** The agent's latest triage of it. */
  lastTriage?: { outcome: string; classifier: string } | null;
  /** Every status change, oldest first. */
  statusHistory?: Array<{ from: string; to: string; by: string; outcome: string | null; at: string }>;
  /** True once a prospect's message arrived that no one has marked read since; a reply of ours does not change it. */
  unread?: boolean;
  /** Our id of the latest inbound message: what a reply threads onto and what "read" means up to. */
  lastInboundMessageId?: string | null;
  lastMessageAt: string;
  createdAt: string;
}

export const getConversation = (store: ReadModelStore, conversationId: string) => store.get<ConversationDoc>(CONVERSATIONS, conversationId);
