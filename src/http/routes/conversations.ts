import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { emailFilter } from '../../domain/email.ts';
import { CONVERSATION_STATUSES } from '../../domain/conversation.ts';
import { booleanParam, isoBeforeParam, isoParam, pageQuery } from '../pagination.ts';
import { errors, noQuery, resourceId, siteParams } from '../schemas.ts';
import { conversationDetail as conversationDetailView, conversationsPage } from '../views/inbox.ts';
import { conversationDetail, conversationObject } from './inboxSchemas.ts';

/** The list's answer; the OpenAPI document shows it, and test/inbox/listResponses.test.ts parses real answers with it. */
export const conversationsPageResponse = z.object({ conversations: z.array(conversationObject), hasMore: z.boolean(), nextCursor: z.string().nullable() });

const listQuery = pageQuery.extend({
  status: z.enum(CONVERSATION_STATUSES).optional(),
  unread: booleanParam.optional(),
  aiPaused: booleanParam.optional(),
  contactEmail: emailFilter.optional(),
  createdAfter: isoParam.optional(),
  createdBefore: isoBeforeParam.optional(),
  updatedAfter: isoParam.optional().meta({ description: "updatedAt: the last message, status change, triage, take-over or a reply's send outcome" }),
  updatedBefore: isoBeforeParam.optional(),
});

/** The Outreach Agent inbox, read side: the site's conversations and one conversation with its messages. */
const plugin: FastifyPluginAsyncZod = async (app) => {
  const path = '/api/v1/sites/:siteId/outreach/conversations';

  app.get(
    path,
    {
      config: { access: { scope: 'inbox:read', site: true } },
      // The page is built by `conversationOf`, typed as the schema's output, and errors by the error
      // handler in the envelope's shape; zod's serializer parsed every page into a copy before
      // `JSON.stringify` (a tenth of the route's CPU). The schema still documents the answer.
      serializerCompiler: () => (data) => JSON.stringify(data),
      schema: {
        summary: 'List conversations, newest first, with a cursor',
        tags: ['inbox'],
        params: siteParams,
        querystring: listQuery,
        response: {
          200: conversationsPageResponse,
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async function listConversationsRoute(request) {
      return conversationsPage(app.readModels, request.site!.id, request.query);
    },
  );

  app.get(
    `${path}/:conversationId`,
    {
      config: { access: { scope: 'inbox:read', site: true } },
      schema: {
        summary: 'Get a conversation with its messages (oldest first), opportunity and status history',
        tags: ['inbox'],
        params: siteParams.extend({ conversationId: resourceId() }),
        querystring: noQuery,
        response: { 200: z.object({ conversation: conversationDetail }), ...errors(400, 401, 403, 404) },
      },
    },
    async function getConversationRoute(request) {
      return conversationDetailView(app.readModels, request.site!.id, request.params.conversationId, request.credential!);
    },
  );
};

export const conversationRoutes = fp(plugin, {
  name: 'conversation-routes',
  dependencies: ['services', 'authenticate'],
  encapsulate: true,
});
