import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { emailAddress } from '../../domain/email.ts';
import { CLEAN_TEXT_MESSAGE, isCleanText } from '../../domain/text.ts';
import { ingestMessage } from '../../commands/ingestion.ts';
import { SKIP_REASONS } from '../../domain/aiPause.ts';
import { ServiceError } from '../../domain/errors.ts';
import { IDEMPOTENCY_KEY_SHAPE, MESSAGE_ID_SHAPE } from '../../domain/ingestion.ts';
import { cleanText, errors, siteParams } from '../schemas.ts';
import { actingFor } from '../actingFor.ts';

/** RFC 5322 caps a header line at 998 characters; References chains may fold over many lines. */
// Message ids as the client has them; a control character or a lone surrogate is no part of one (and was stored and served back).
const headerValue = (max: number) => z.string().max(max).refine(isCleanText, CLEAN_TEXT_MESSAGE).nullable().optional();

export const ingestionBody = z.object({
  from: emailAddress.meta({ description: "prospect's address" }),
  fromName: cleanText().max(500).nullable().optional().meta({ description: 'display name of the prospect' }),
  subject: cleanText().max(2_000).default(''),
  bodyText: cleanText().default('').meta({ description: 'the text the extractor parses' }),
  bodyHtml: cleanText().nullable().optional().meta({ description: 'stored for the inbox UI, not parsed' }),
  // Surrounding white space is dropped and an empty value is no value (both were accepted before the shape was checked).
  messageId: z
    .string()
    .max(998)
    .refine((v) => v.trim() === '' || MESSAGE_ID_SHAPE.test(v.trim()), 'must be an RFC 5322 Message-Id, <left@right> (angle brackets optional, no spaces)')
    .nullable()
    .optional()
    .meta({ description: 'Message-Id of the original email (RFC 5322, `<left@right>`); used for threading' }),
  inReplyTo: headerValue(998),
  references: headerValue(32_000),
  runExtraction: z.boolean().default(true),
});

export const ingestionResult = z.object({
  ok: z.literal(true),
  siteId: z.string(),
  conversationIds: z.array(z.string()),
  opportunityIds: z.array(z.string()),
  entrySource: z.enum(['forwarded_actionable', 'forwarded_unactionable', 'direct_inbound_external', 'outbound_pitch']),
  aiPaused: z.boolean(),
  skipReason: z.enum(SKIP_REASONS).optional(),
});

const headers = z.looseObject({
  'idempotency-key': z
    .string()
    .regex(IDEMPOTENCY_KEY_SHAPE, 'must be 1 to 128 characters from letters, digits, ".", "_", "-" and ":"')
    .optional(),
});

/**
 * Whose Idempotency-Keys these are. An API key is its own scope. An OAuth access token lives about
 * an hour and is replaced on refresh, so its scope is the OAuth client acting for the team: a retry
 * after a token refresh, within the 24 hours, still replays instead of ingesting twice.
 */
export function idempotencyScope(credential: { kind: string; id: string; teamId: string; oauthClientId: string | null }): string {
  if (credential.kind === 'oauth_access_token' && credential.oauthClientId) return `oauth_client:${credential.oauthClientId}:${credential.teamId}`;
  return `${credential.kind}:${credential.id}`;
}

const plugin: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/api/v1/sites/:siteId/outreach/inbox/messages',
    {
      bodyLimit: app.config.INGESTION_BODY_LIMIT_BYTES,
      config: { access: { scope: 'inbox:write', site: true, licence: 'route' } },
      // The bodies this route sends are built by the decider and the error handler in these very
      // shapes; the schemas below document them, and checking each one again with zod cost more
      // than writing it (the hot path of the service).
      serializerCompiler: () => (data) => JSON.stringify(data),
      schema: {
        summary: 'Ingest a forwarded-style message into the Outreach Agent inbox',
        tags: ['inbox'],
        params: siteParams,
        headers,
        body: ingestionBody,
        response: { 201: ingestionResult, 200: ingestionResult, ...errors(400, 401, 402, 403, 404, 409, 429, 503) },
      },
    },
    async function ingestMessageRoute(request, reply) {
      const credential = request.credential!;
      const logCause = (error: unknown) => {
        // A 503 hides its cause from the client; the operator sees it (never the body or credentials).
        if (error instanceof ServiceError && error.code === 'SERVICE_UNAVAILABLE' && error.cause) request.log.error({ err: error.cause }, 'ingestion not recorded');
        throw error;
      };
      const key = request.headers['idempotency-key'];
      const b = request.body;
      const outcome = await ingestMessage(actingFor(app, request), {
        site: request.site!,
        idempotency: key ? { scope: idempotencyScope(credential), key } : null,
        channel: 'api',
        runExtraction: b.runExtraction,
        message: {
          from: b.from,
          fromName: b.fromName ?? null,
          subject: b.subject,
          bodyText: b.bodyText,
          bodyHtml: b.bodyHtml ?? null,
          messageId: b.messageId?.trim() || null,
          inReplyTo: b.inReplyTo ?? null,
          references: b.references ?? null,
        },
      }).catch(logCause);
      // Stored is stored: a 503 here would be retried (the spec's meaning of 503) and ingest twice.
      await app.waitForWrite(outcome.position, 'answer');
      return reply.status(outcome.status).send(outcome.body);
    },
  );
};

export const ingestionRoutes = fp(plugin, {
  name: 'ingestion-routes',
  dependencies: ['services', 'ingestion-ports', 'read-your-writes', 'authenticate'],
  encapsulate: true,
});
