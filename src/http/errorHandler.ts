import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { type ErrorCode, ServiceError } from '../domain/errors.ts';
import { EventTooLargeError } from '../ports/eventStore.ts';
import { isStoreUnavailable } from '../ports/storeUnavailable.ts';
import { UNSUPPORTED_CHARSET } from './charset.ts';
import { truncateText } from '../domain/text.ts';
import { restMethodsOfPath } from './methodsOfPath.ts';
import { isPagePath, sendRefusalPage } from './web/html.ts';

export const errorBody = (code: string, message: string) => ({ error: { code, message } });
export const STORE_UNAVAILABLE = 'A store the service depends on is unavailable for now; retry shortly. A write whose store stopped answering may have been stored: retry an ingestion with the same Idempotency-Key, and look before repeating another write.';

/** The one map from a domain error's code to its HTTP status and the code the client sees (the spec's error table). */
const HTTP_ERRORS: Record<ErrorCode, { status: number; code: string }> = {
  VALIDATION_ERROR: { status: 400, code: 'VALIDATION_ERROR' },
  UNAUTHORIZED: { status: 401, code: 'UNAUTHORIZED' },
  PAYMENT_REQUIRED: { status: 402, code: 'SITE_NOT_LICENSED' },
  INSUFFICIENT_SCOPE: { status: 403, code: 'INSUFFICIENT_SCOPE' },
  SITE_NOT_LICENSED: { status: 403, code: 'SITE_NOT_LICENSED' },
  SITE_NOT_FOUND: { status: 404, code: 'SITE_NOT_FOUND' },
  NOT_FOUND: { status: 404, code: 'NOT_FOUND' },
  CONFLICT: { status: 409, code: 'CONFLICT' },
  SUBSCRIPTION_LIMIT_REACHED: { status: 409, code: 'SUBSCRIPTION_LIMIT_REACHED' },
  ARTICLE_LIMIT_REACHED: { status: 409, code: 'ARTICLE_LIMIT_REACHED' },
  SUBSCRIPTION_DISABLED: { status: 409, code: 'SUBSCRIPTION_DISABLED' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, code: 'IDEMPOTENCY_KEY_REUSED' },
  CONVERSATION_TRANSITION_NOT_ALLOWED: { status: 409, code: 'CONVERSATION_TRANSITION_NOT_ALLOWED' },
  REPLY_IN_FLIGHT: { status: 409, code: 'REPLY_IN_FLIGHT' },
  CONVERSATION_TAKEN_OVER: { status: 409, code: 'CONVERSATION_TAKEN_OVER' },
  CONVERSATION_NOT_TAKEN_OVER: { status: 409, code: 'CONVERSATION_NOT_TAKEN_OVER' },
  REPLY_NOT_PENDING: { status: 409, code: 'REPLY_NOT_PENDING' },
  CONTACT_SUPPRESSED: { status: 409, code: 'CONTACT_SUPPRESSED' },
  SENDING_DOMAIN_UNVERIFIED: { status: 409, code: 'SENDING_DOMAIN_UNVERIFIED' },
  PLAN_REQUIRED: { status: 403, code: 'PLAN_REQUIRED' },
  INSUFFICIENT_CREDITS: { status: 402, code: 'INSUFFICIENT_CREDITS' },
  AGENT_INACTIVE: { status: 409, code: 'AGENT_INACTIVE' },
  AGENT_NOT_FOUND: { status: 404, code: 'AGENT_NOT_FOUND' },
  UNKNOWN_SETTING: { status: 400, code: 'UNKNOWN_SETTING' },
  RATE_LIMITED: { status: 429, code: 'RATE_LIMITED' },
  INTERNAL_ERROR: { status: 500, code: 'INTERNAL_ERROR' },
  SERVICE_UNAVAILABLE: { status: 503, code: 'SERVICE_UNAVAILABLE' },
};

/** The HTTP status of a domain error's code (the dashboard's pages answer with it too). */
export const httpStatusOf = (code: ErrorCode) => HTTP_ERRORS[code].status;
/** The HTTP status and client-facing code of a domain error (the MCP tools answer the same codes). */
export const httpErrorOf = (error: ServiceError) => HTTP_ERRORS[error.code];

/** What a client sent, quoted back in a message: cut at `max` characters (an unknown 10,000-character query key came back whole). */
const echoed = (text: string, max: number) => (text.length <= max ? text : `${truncateText(text, max)}…`);

/** One error envelope for everything: spec errors, validation, parser errors, unknown routes, crashes. */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  const methodsOf = restMethodsOfPath(app);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ServiceError) {
      const { status, code } = HTTP_ERRORS[error.code];
      if (error.retryAfterSeconds !== null) reply.header('retry-after', String(error.retryAfterSeconds));
      return reply.status(status).send(errorBody(code, error.message));
    }
    // A store down, failing over, unreachable or (embedded) locked by another process past the busy
    // wait: unavailable for now, a retry may pass.
    if (isStoreUnavailable(error)) {
      request.log.warn({ err: error }, 'a store is unavailable');
      reply.header('retry-after', '1');
      return reply.status(503).send(errorBody('SERVICE_UNAVAILABLE', STORE_UNAVAILABLE));
    }
    if ((error as unknown) instanceof EventTooLargeError) {
      return reply.status(400).send(errorBody('VALIDATION_ERROR', 'The request is larger than the event store accepts in one write; send less.'));
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      const details = error.validation
        .map((v) => {
          const path = String(v.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
          return `${error.validationContext ?? 'body'}${path ? '.' + path : ''}: ${v.message}`;
        })
        .join('; ');
      return reply.status(400).send(errorBody('VALIDATION_ERROR', echoed(details, 1_000) || 'Invalid request.'));
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        // A route may set a smaller limit of its own (ingestion does); name the one that applied.
        return reply
          .status(400)
          .send(errorBody('VALIDATION_ERROR', `Request body exceeds the limit of ${Math.min(request.routeOptions.bodyLimit ?? bodyLimit, bodyLimit)} bytes.`));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.status(400).send(errorBody('VALIDATION_ERROR', 'Content-Type must be application/json.'));
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        // The parser refuses prototype-poisoning keys as it refuses bad syntax, with one error for both.
        return reply.status(400).send(errorBody('VALIDATION_ERROR', 'Request body is not valid JSON, or holds a "__proto__" key or a "constructor" with a "prototype" (refused).'));
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply.status(400).send(errorBody('VALIDATION_ERROR', 'Request body must be a JSON object.'));
      case UNSUPPORTED_CHARSET:
        return reply.status(415).send(errorBody(UNSUPPORTED_CHARSET, error.message));
    }
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return reply.status(500).send(errorBody('INTERNAL_ERROR', 'Internal server error.'));
    }
    if (status === 404) return reply.status(404).send(errorBody('NOT_FOUND', error.message));
    if (status === 401) return reply.status(401).send(errorBody('UNAUTHORIZED', error.message));
    return reply.status(400).send(errorBody('VALIDATION_ERROR', error.message));
  });

  app.setNotFoundHandler((request, reply) => {
    if (isPagePath(request.url)) return sendRefusalPage(reply, 404, 'There is no such page.');
    const path = request.url.split('?')[0]!;
    const allowed = methodsOf(path);
    // A path a route of this very method would take but refused (a parameter over its length, say) stays a 404.
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      const allow = allowed.join(', ');
      return reply.status(405).header('allow', allow).send(errorBody('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${echoed(path, 200)}; it answers ${allow}.`));
    }
    reply.status(404).send(errorBody('NOT_FOUND', `Route ${request.method} ${echoed(path, 200)} not found.`));
  });
}
