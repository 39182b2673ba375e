import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ServiceError } from '../domain/errors.ts';

export const errorBody = (code: string, message: string) => ({ error: { code, message } });

/** One error envelope for everything: spec errors, validation, parser errors, unknown routes, crashes. */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ServiceError) {
      return reply.status(error.status).headers(error.headers).send(errorBody(error.code, error.message));
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      const details = error.validation
        .map((v) => {
          const path = String(v.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
          return `${error.validationContext ?? 'body'}${path ? '.' + path : ''}: ${v.message}`;
        })
        .join('; ');
      return reply.status(400).send(errorBody('VALIDATION_ERROR', details || 'Invalid request.'));
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        // A route may set a smaller limit of its own (ingestion does); name the one that applied.
        return reply
          .status(400)
          .send(errorBody('VALIDATION_ERROR', `Request body exceeds the limit of ${Math.min(request.routeOptions.bodyLimit ?? bodyLimit, bodyLimit)} bytes.`));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.status(400).send(errorBody('VALIDATION_ERROR', 'Content-Type must be application/json.'));
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply.status(400).send(errorBody('VALIDATION_ERROR', 'Request body must be a JSON object.'));
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
    reply.status(404).send(errorBody('NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found.`));
  });
}
