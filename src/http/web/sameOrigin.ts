import type { FastifyInstance } from 'fastify';

/**
 * A form of another origin may not post to the browser's pages. The CSRF tokens guard a signed-in
 * form; the sign-in and join forms have no session to bind theirs to, and a page on another port of
 * the same host (the same site, for cookies) could set that cookie and post a matching token: it
 * signed the browser in as the attacker's account. Browsers name the origin of a form post
 * (`Sec-Fetch-Site`; `Origin` where that is missing), so such a post is refused with 403.
 */
export function refuseOtherOrigins(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
    const fetchSite = request.headers['sec-fetch-site'];
    if (fetchSite !== undefined) {
      if (fetchSite === 'same-origin' || fetchSite === 'none') return;
    } else {
      const origin = request.headers.origin;
      // The service's public origin, or the one this request reached (a proxy without TRUST_PROXY says http).
      if (origin === undefined || origin === new URL(app.config.PUBLIC_BASE_URL).origin || origin === `${request.protocol}://${request.host}`) return;
    }
    throw Object.assign(new Error('A form of another site may not be sent here. Open the page on this site and try again.'), { statusCode: 403 });
  });
}
