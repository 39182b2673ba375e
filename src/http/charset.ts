import type { FastifyInstance, FastifyRequest } from 'fastify';

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
  app.addHook('onRequest', async (request, reply) => {
    // A compressed body would be parsed as if it were plain (RFC 9110 §8.4: 415, naming what is accepted).
    const encoding = request.headers['content-encoding']?.trim().toLowerCase();
    const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
    if (encoding && encoding !== 'identity' && hasBody) {
      reply.header('accept-encoding', 'identity');
      const message = `Request bodies are taken as they are; the Content-Encoding ${JSON.stringify(encoding.slice(0, 40))} is not accepted.`;
      throw Object.assign(new Error(message), { statusCode: 415, code: UNSUPPORTED_CHARSET });
    }
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

/** The `code` of a JSON body whose bytes are not UTF-8 (answered 400 VALIDATION_ERROR; on /mcp a parse error). */
export const INVALID_UTF8_BODY = 'INVALID_UTF8_BODY';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as text, or an error for bytes that are not UTF-8 (they were read as U+FFFD and stored so). */
export function utf8Body(body: Buffer): string | Error {
  try {
    return strictUtf8.decode(body);
  } catch {
    return Object.assign(new Error('Request body is not valid UTF-8.'), { statusCode: 400, code: INVALID_UTF8_BODY });
  }
}

type Done = (error: Error | null, body?: unknown) => void;

/**
 * A content-type parser (`parseAs: 'buffer'`) that decodes the body strictly as UTF-8 and hands the
 * text to `then`; bytes that are not UTF-8 are refused with INVALID_UTF8_BODY (each scope words it).
 */
export const fromUtf8 =
  (then: (request: FastifyRequest, text: string, done: Done) => void) =>
  (request: FastifyRequest, body: string | Buffer, done: Done): void => {
    const text = utf8Body(body as Buffer);
    if (text instanceof Error) return done(text, undefined);
    then(request, text, done);
  };
