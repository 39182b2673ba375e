import { normaliseEmail } from '../../domain/email.ts';
import { notFound } from '../../domain/errors.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import { type ConversationFilters, getConversation, listConversationsPage } from '../../readModels/conversations.ts';
import { listMessagesOfConversation } from '../../readModels/messages.ts';
import { type OpportunityFilters, listOpportunitiesPage } from '../../readModels/opportunities.ts';
import { getOpportunity } from '../../readModels/opportunities.ts';
import { decodeCursor, pageOf } from '../pagination.ts';
import { conversationOf, messageOf, opportunityOf } from '../routes/inboxSchemas.ts';

/**
 * The inbox API's answers, built once for every caller: the REST routes and the MCP tools call
 * these with a site the credential was already checked against.
 */

export interface PageRequest {
  limit: number;
  cursor?: string;
}

/** A page of the site's conversations, newest first; `contactEmail` is matched however it is written. */
export async function conversationsPage(store: ReadModelStore, siteId: string, query: PageRequest & ConversationFilters) {
  const { limit, cursor, contactEmail, ...filters } = query;
  const docs = await listConversationsPage(
    store,
    siteId,
    { ...filters, ...(contactEmail !== undefined ? { contactEmail: normaliseEmail(contactEmail) } : {}) },
    decodeCursor(cursor),
    limit,
  );
  const page = pageOf(docs, limit, 'createdAt');
  return { conversations: page.items.map(conversationOf), hasMore: page.hasMore, nextCursor: page.nextCursor };
}

/**
 * One conversation of the site with its messages (oldest first), opportunity and status history;
 * another site's is not found. The opportunity is shown to a credential with `opportunities:read`
 * only (null otherwise, its `opportunityId` still there), as GET opportunities/{id} is.
 */
export async function conversationDetail(store: ReadModelStore, siteId: string, conversationId: string, credential: { scopes: ReadonlySet<string> }) {
  const conversation = await getConversation(store, conversationId);
  if (!conversation || conversation.siteId !== siteId) throw notFound('Conversation not found.');
  const mayReadOpportunity = credential.scopes.has('opportunities:read');
  const [messages, opportunity] = await Promise.all([
    listMessagesOfConversation(store, siteId, conversation.id),
    mayReadOpportunity ? getOpportunity(store, conversation.opportunityId) : null,
  ]);
  return {
    conversation: {
      ...conversationOf(conversation),
      statusHistory: conversation.statusHistory ?? [],
      lastTriage: conversation.lastTriage ?? null,
      opportunity: opportunity && opportunity.siteId === siteId ? opportunityOf(opportunity) : null,
      messages: messages.map(messageOf),
    },
  };
}

/** A page of the site's opportunities, newest first. */
export async function opportunitiesPage(store: ReadModelStore, siteId: string, query: PageRequest & OpportunityFilters) {
  const { limit, cursor, ...filters } = query;
  const docs = await listOpportunitiesPage(store, siteId, filters, decodeCursor(cursor), limit);
  const page = pageOf(docs, limit, 'createdAt');
  return { opportunities: page.items.map(opportunityOf), hasMore: page.hasMore, nextCursor: page.nextCursor };
}

/** One opportunity of the site; another site's is not found. */
export async function opportunityDetail(store: ReadModelStore, siteId: string, opportunityId: string) {
  const opportunity = await getOpportunity(store, opportunityId);
  if (!opportunity || opportunity.siteId !== siteId) throw notFound('Opportunity not found.');
  return { opportunity: opportunityOf(opportunity) };
}
