import type { FastifyInstance } from 'fastify';
import { errorBody } from './errorHandler.ts';

/** The charset a `Content-Type` names, lower-cased and unquoted, or null when it names none. */
export function declaredCharset(contentType: string): string | null {
  for (const param of contentType.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq < 0) continue;
    if (param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    return param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return null;
}

/**
 * Bodies are read as UTF-8 only: a request that declares another charset is refused with 415
 * before its body is read, instead of being decoded as the wrong text.
 */
export function refuseNonUtf8Bodies(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const contentType = request.headers['content-type'];
    if (!contentType) return;
    const charset = declaredCharset(contentType);
    if (charset === null || charset === 'utf-8' || charset === 'utf8') return;
    return reply
      .status(415)
      .send(errorBody('UNSUPPORTED_MEDIA_TYPE', `Request bodies must be UTF-8; the Content-Type declares charset ${JSON.stringify(charset.slice(0, 40))}.`));
  });
}
