import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CONVERSATION_STATUSES } from '../../domain/conversation.ts';
import { normaliseEmail } from '../../domain/email.ts';
import { notFound } from '../../domain/errors.ts';
import { getConversation, listConversationsPage } from '../../readModels/conversations.ts';
import { listMessagesOfConversation } from '../../readModels/messages.ts';
import { getOpportunity } from '../../readModels/opportunities.ts';
import { booleanParam, decodeCursor, isoParam, pageOf, pageQuery } from '../pagination.ts';
import { errors, siteParams } from '../schemas.ts';
import { conversationDetail, conversationObject, conversationOf, messageOf, opportunityOf } from './inboxSchemas.ts';

const listQuery = pageQuery.extend({
  status: z.enum(CONVERSATION_STATUSES).optional(),
  unread: booleanParam.optional(),
  aiPaused: booleanParam.optional(),
  contactEmail: z.string().max(320).optional(),
  createdAfter: isoParam.optional(),
  createdBefore: isoParam.optional(),
  updatedAfter: isoParam.optional().meta({ description: 'updatedAt: the last message, status change, triage or take-over' }),
  updatedBefore: isoParam.optional(),
});

/** The Outreach Agent inbox, read side: the site's conversations and one conversation with its messages. */
const plugin: FastifyPluginAsyncZod = async (app) => {
  const path = '/api/v1/sites/:siteId/outreach/conversations';

  app.get(
    path,
    {
      config: { access: { scope: 'inbox:read', site: true } },
      schema: {
        summary: 'List conversations, newest first, with a cursor',
        tags: ['inbox'],
        params: siteParams,
        querystring: listQuery,
        response: {
          200: z.object({ conversations: z.array(conversationObject), hasMore: z.boolean(), nextCursor: z.string().nullable() }),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async function listConversationsRoute(request) {
      const { limit, cursor, contactEmail, ...filters } = request.query;
      const docs = await listConversationsPage(
        app.readModels,
        request.site!.id,
        { ...filters, ...(contactEmail !== undefined ? { contactEmail: normaliseEmail(contactEmail) } : {}) },
        decodeCursor(cursor),
        limit,
      );
      const page = pageOf(docs, limit, 'createdAt');
      return { conversations: page.items.map(conversationOf), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
  );

  app.get(
    `${path}/:conversationId`,
    {
      config: { access: { scope: 'inbox:read', site: true } },
      schema: {
        summary: 'Get a conversation with its messages (oldest first), opportunity and status history',
        tags: ['inbox'],
        params: siteParams.extend({ conversationId: z.string().min(1).max(100) }),
        response: { 200: z.object({ conversation: conversationDetail }), ...errors(401, 403, 404) },
      },
    },
    async function getConversationRoute(request) {
      const siteId = request.site!.id;
      const conversation = await getConversation(app.readModels, request.params.conversationId);
      if (!conversation || conversation.siteId !== siteId) throw notFound('Conversation not found.');
      const [messages, opportunity] = await Promise.all([
        listMessagesOfConversation(app.readModels, siteId, conversation.id),
        getOpportunity(app.readModels, conversation.opportunityId),
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
    },
  );
};

export const conversationRoutes = fp(plugin, {
  name: 'conversation-routes',
  dependencies: ['services', 'authenticate'],
  encapsulate: true,
});
