import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import { parse } from 'fast-querystring';
import { INVALID_UTF8_BODY, fromUtf8 } from '../charset.ts';

// A reply may hold 20,000 characters, and percent-encoded a CJK one takes 9 bytes (180 KB), with room for the other fields.
const FORM_LIMIT = 256 * 1024;

/** Form bodies and cookies for a browser-facing scope; the JSON API never accepts either. */
export async function formsAndCookies(app: FastifyInstance): Promise<void> {
  if (!app.hasRequestDecorator('cookies')) await app.register(cookie);
  // Decoded strictly: bytes that are not UTF-8 (a browser always sends UTF-8) were read as U+FFFD,
  // and percent-encoded ones (`caf%E9`) kept as written.
  const parseForm = fromUtf8((_request, text, done) => {
    if (text.includes('%') && text.split(/[&=]/).some((part) => !percentDecodes(part))) {
      return done(Object.assign(new Error('Request body is not valid form encoding: a percent-encoded part is not UTF-8.'), { statusCode: 400, code: INVALID_UTF8_BODY }));
    }
    done(null, parse(text));
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: FORM_LIMIT }, parseForm);
}

const percentDecodes = (part: string) => {
  try {
    decodeURIComponent(part);
    return true;
  } catch {
    return false;
  }
};
