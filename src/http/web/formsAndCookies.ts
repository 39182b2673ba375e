import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';

// A reply may hold 20,000 characters, and percent-encoded a CJK one takes 9 bytes (180 KB), with room for the other fields.
const FORM_LIMIT = 256 * 1024;

/** Form bodies and cookies for a browser-facing scope; the JSON API never accepts either. */
export async function formsAndCookies(app: FastifyInstance): Promise<void> {
  if (!app.hasRequestDecorator('cookies')) await app.register(cookie);
  await app.register(formbody, { bodyLimit: FORM_LIMIT });
}
