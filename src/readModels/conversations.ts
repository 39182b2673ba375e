import type { SkipReason } from '../domain/aiPause.ts';
import type { EntrySource } from '../domain/outreachEvents.ts';
import type { Filter, PageQuery, ReadModelStore, SortValue } from '../ports/readModelStore.ts';

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
  /** `contactEmail` normalised (lower case), what the API's contactEmail filter matches. */
  contactEmailKey?: string;
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
  /** When anything about it last changed: a message, a status, a triage, a take-over. */
  updatedAt: string;
  createdAt: string;
}

/**
 * The list's indexes: the site's conversations newest first, and one per equality filter. A page
 * with several filters walks the one with the most of them and checks the others on the way; the
 * `updatedAt` range, like every range on a field other than `createdAt`, is checked on the walk.
 */
export const CONVERSATION_INDEXES = [
  ['siteId', 'createdAt'],
  ['siteId', 'status', 'createdAt'],
  ['siteId', 'unread', 'createdAt'],
  ['siteId', 'aiPaused', 'createdAt'],
  ['siteId', 'contactEmailKey', 'createdAt'],
] as const;

export const getConversation = (store: ReadModelStore, conversationId: string) => store.get<ConversationDoc>(CONVERSATIONS, conversationId);

export interface ConversationFilters {
  status?: string;
  unread?: boolean;
  aiPaused?: boolean;
  contactEmail?: string;
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  updatedBefore?: string;
}

/** A page of the site's conversations, newest first (createdAt, then id), after `after`; one extra to tell whether more follow. */
export function listConversationsPage(store: ReadModelStore, siteId: string, filters: ConversationFilters, after: { value: SortValue; id: string } | null, limit: number) {
  const filter: Filter = { siteId };
  if (filters.status !== undefined) filter.status = filters.status;
  if (filters.unread !== undefined) filter.unread = filters.unread;
  if (filters.aiPaused !== undefined) filter.aiPaused = filters.aiPaused;
  if (filters.contactEmail !== undefined) filter.contactEmailKey = filters.contactEmail;
  const ranges: PageQuery['ranges'] = {};
  if (filters.createdAfter !== undefined || filters.createdBefore !== undefined) ranges.createdAt = { gt: filters.createdAfter, lt: filters.createdBefore };
  if (filters.updatedAfter !== undefined || filters.updatedBefore !== undefined) ranges.updatedAt = { gt: filters.updatedAfter, lt: filters.updatedBefore };
  return store.page<ConversationDoc>(CONVERSATIONS, { filter, ranges, orderBy: 'createdAt', direction: 'desc', after, limit: limit + 1 });
}
