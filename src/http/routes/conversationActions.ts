import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CONVERSATION_STATUSES } from '../../domain/conversation.ts';
import { IDEMPOTENCY_KEY_SHAPE } from '../../domain/ingestion.ts';
import { ONE_LINE_TEXT_MESSAGE, isOneLineText } from '../../domain/text.ts';
import { errors, nonBlankText, resourceId, siteParams } from '../schemas.ts';
import { refuseBody } from '../refuseBody.ts';
import { type SimpleAction, changeStatusAsPerson, findConversation, replyAsPerson, runSimpleAction } from '../views/conversationActions.ts';
import { actingFor } from '../actingFor.ts';

const params = siteParams.extend({ conversationId: resourceId() });

const headers = z.looseObject({
  'idempotency-key': z
    .string()
    .regex(IDEMPOTENCY_KEY_SHAPE, 'must be 1 to 128 characters from letters, digits, ".", "_", "-" and ":"')
    .optional(),
});

/** The conversation after an action, read back once the read models include it. */
const conversationState = z.object({
  id: z.string(),
  status: z.enum(CONVERSATION_STATUSES),
  handledBy: z.enum(['agent', 'human']).meta({ description: '`human` once a person took it over: the agent no longer acts on it' }),
  unread: z.boolean(),
});
const actionResult = z.object({ conversation: conversationState });

// Strict: a mistyped optional field (`subjet`) would send mail other than the caller meant.
export const replyBody = z.strictObject({
  text: nonBlankText().max(20_000),
  subject: nonBlankText()
    .max(998)
    .refine(isOneLineText, ONE_LINE_TEXT_MESSAGE)
    .optional()
    .meta({ description: 'default: `Re: ` and the subject of the latest inbound message' }),
});
const replyResult = z.object({
  message: z.object({
    id: z.string(),
    rfcMessageId: z.string(),
    deliveryStatus: z
      .enum(['sending', 'sent', 'retrying', 'failed'])
      .meta({ description: '`retrying`: a temporary failure, the agent worker retries it; `sending` only when repeating a key whose first call is still sending' }),
  }),
  conversation: conversationState,
});

export const statusBody = z.strictObject({
  status: z.enum(CONVERSATION_STATUSES),
  resolutionOutcome: nonBlankText().max(64).optional().meta({ description: 'free-form outcome for the webhook (default `manual`); not with `open`, which emits no event' }),
});

const plugin: FastifyPluginAsyncZod = async (app) => {
  const path = '/api/v1/sites/:siteId/outreach/conversations/:conversationId';
  const access = { scope: 'inbox:write' as const, site: true };
  const schemaOf = (summary: string) => ({ summary, tags: ['inbox'], params, headers, response: { 200: actionResult, ...errors(400, 401, 403, 404, 409, 429, 503) } });

  /** The conversation of the path, on the path's site; any other is not found (another site's is not told apart). */
  const conversationOf = (request: FastifyRequest) => findConversation(app, request.site!.id, (request.params as z.infer<typeof params>).conversationId);

  app.post(
    `${path}/reply`,
    { config: { access }, schema: { ...schemaOf('Reply to a conversation as a person'), body: replyBody, response: { 201: replyResult, 200: replyResult, ...errors(400, 401, 403, 404, 409, 429, 503) } } },
    async function replyRoute(request, reply) {
      const outcome = await replyAsPerson(actingFor(app, request), {
        ref: await conversationOf(request),
        site: request.site!,
        credential: request.credential!,
        text: request.body.text,
        subject: request.body.subject,
        idempotencyKey: request.headers['idempotency-key'],
      });
      return reply.status(outcome.status).send({ message: outcome.message, conversation: outcome.conversation });
    },
  );

  app.post(
    `${path}/status`,
    { config: { access }, schema: { ...schemaOf('Change a conversation\'s status as a person'), body: statusBody } },
    async function changeStatusRoute(request) {
      return changeStatusAsPerson(actingFor(app, request), {
        ref: await conversationOf(request),
        status: request.body.status,
        resolutionOutcome: request.body.resolutionOutcome,
        by: request.credential!.id,
      });
    },
  );

  const simple = (action: SimpleAction, summary: string) =>
    app.post(`${path}/${action}`, { config: { access }, preHandler: refuseBody, schema: schemaOf(summary) }, async function conversationActionRoute(request) {
      return runSimpleAction(actingFor(app, request), action, { ref: await conversationOf(request), by: request.credential!.id });
    });

  simple('takeover', 'Take a conversation over from the Outreach Agent');
  simple('handback', 'Hand a conversation back to the Outreach Agent');
  simple('read', 'Mark a conversation read');
  simple('unread', 'Mark a conversation unread');
};

export const conversationActionRoutes = fp(plugin, {
  name: 'conversation-action-routes',
  dependencies: ['services', 'read-your-writes', 'authenticate'],
  encapsulate: true,
});
