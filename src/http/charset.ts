import type { FastifyInstance } from 'fastify';

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
 * before its body is read, instead of being decoded as the wrong text. Thrown, not sent: each
 * scope's error handler words it (the API's envelope, OAuth's `invalid_request`, a page).
 */
export function refuseNonUtf8Bodies(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const contentType = request.headers['content-type'];
    if (!contentType) return;
    const charset = declaredCharset(contentType);
    if (charset === null || charset === 'utf-8' || charset === 'utf8') return;
    const message = `Request bodies must be UTF-8; the Content-Type declares charset ${JSON.stringify(charset.slice(0, 40))}.`;
    throw Object.assign(new Error(message), { statusCode: 415, code: UNSUPPORTED_CHARSET });
  });
}

/** The `code` of that refusal. */
export const UNSUPPORTED_CHARSET = 'UNSUPPORTED_MEDIA_TYPE';
