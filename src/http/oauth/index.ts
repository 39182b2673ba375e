import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Services } from '../../services.ts';
import { dashboardPages } from '../dashboard/pages.ts';
import { html, page, sendPage } from '../dashboard/html.ts';
import { signInRoutes } from '../dashboard/signIn.ts';
import type { WaitForWrite } from '../schemas.ts';
import { authorizeRoutes } from './authorize.ts';
import { NO_STORE, OAuthError } from './errors.ts';
import { metadataRoutes } from './metadata.ts';
import { tokenRoutes } from './token.ts';

export interface OAuthPluginOptions {
  services: Services;
  waitForWrite: WaitForWrite;
}

const FORM_LIMIT = 64 * 1024;

/** Maps whatever went wrong on the OAuth JSON endpoints to RFC 6749 §5.2, outside the API envelope. */
function oauthErrorHandler(error: FastifyError, request: { log: { error: (o: object, m: string) => void } }) {
  if (error instanceof OAuthError) return error;
  if (error.statusCode && error.statusCode < 500) return new OAuthError('invalid_request', error.message);
  request.log.error({ err: error }, 'OAuth request failed');
  return new OAuthError('server_error', 'The server failed to handle the request.');
}

/**
 * The OAuth 2.1 authorization server and the dashboard, in their own encapsulated scope: form bodies,
 * cookies and error formats here never leak into the JSON API.
 */
export async function oauthAndDashboard(app: FastifyInstance, opts: OAuthPluginOptions) {
  if (!app.hasRequestDecorator('cookies')) await app.register(cookie);
  await app.register(formbody, { bodyLimit: FORM_LIMIT });

  await app.register(async (oauth) => {
    oauth.setErrorHandler((error: FastifyError, request, reply) => {
      const e = oauthErrorHandler(error, request);
      if (e.basicChallenge) reply.header('www-authenticate', 'Basic realm="oauth", charset="UTF-8"');
      return reply.status(e.status).headers(NO_STORE).send({ error: e.error, error_description: e.description });
    });
    await oauth.register(tokenRoutes, opts);
    await oauth.register(metadataRoutes, opts);
  });

  await app.register(async (web) => {
    web.setErrorHandler((error: FastifyError, request, reply) => {
      const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
      if (status >= 500) request.log.error({ err: error }, 'dashboard request failed');
      return sendPage(reply, status, page('Something went wrong', html`<p class="error" role="alert">${status >= 500 ? 'The server failed to handle the request.' : error.message}</p>`));
    });
    await web.register(authorizeRoutes, opts);
    await web.register(signInRoutes, opts);
    await web.register(dashboardPages, opts);
  });
}
