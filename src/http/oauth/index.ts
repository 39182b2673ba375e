import { readFileSync } from 'node:fs';
import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ClientMetadataFetcher } from '../../adapters/http/clientMetadataFetcher.ts';
import { parseAllowedRanges } from '../../domain/destination.ts';
import type { ClientMetadataSource } from '../../ports/clientMetadata.ts';
import { refuseOtherOrigins } from '../web/sameOrigin.ts';
import { sendErrorPage } from '../web/html.ts';
import { formsAndCookies } from '../web/formsAndCookies.ts';
import { authorizeRoutes } from './authorize.ts';
import { NO_STORE, OAuthError } from './errors.ts';
import { authorizationServerMetadataPaths, metadataRoutes } from './metadata.ts';
import { registrationRoutes } from './registration.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Client ID Metadata Documents, fetched SSRF-safely and cached (inside the OAuth server's scope). */
    clientMetadata: ClientMetadataSource;
  }
}
import { tokenRoutes } from './token.ts';

/** Maps whatever went wrong on the OAuth JSON endpoints to RFC 6749 §5.2, outside the API envelope. */
function oauthErrorHandler(error: FastifyError, request: { log: { error: (o: object, m: string) => void } }) {
  if (error instanceof OAuthError) return error;
  if (error.statusCode && error.statusCode < 500) return new OAuthError('invalid_request', error.message);
  request.log.error({ err: error }, 'OAuth request failed');
  return new OAuthError('server_error', 'The server failed to handle the request.');
}

/**
 * The OAuth 2.1 authorization server in its own encapsulated scope: form bodies, cookies and error
 * formats here never leak into the JSON API. The token endpoints answer OAuth JSON errors; the
 * authorization endpoint is a page (the consent screen) and answers with error pages.
 */
async function oauthServer(app: FastifyInstance) {
  await formsAndCookies(app);
  const config = app.config;
  const clientMetadata = new ClientMetadataFetcher({
    allowed: parseAllowedRanges(config.OAUTH_CLIENT_METADATA_ALLOWED_RANGES),
    extraCa: config.OAUTH_CLIENT_METADATA_EXTRA_CA_FILE ? readFileSync(config.OAUTH_CLIENT_METADATA_EXTRA_CA_FILE, 'utf8') : undefined,
    timeoutMs: config.OAUTH_CLIENT_METADATA_TIMEOUT_MS,
    now: () => app.clock.now().getTime(),
  });
  app.decorate('clientMetadata', clientMetadata);
  app.addHook('onClose', () => clientMetadata.close());

  await app.register(async (tokens) => {
    tokens.setErrorHandler((error: FastifyError, request, reply) => {
      const e = oauthErrorHandler(error, request);
      if (e.basicChallenge) reply.header('www-authenticate', 'Basic realm="oauth", charset="UTF-8"');
      return reply.status(e.status).headers(NO_STORE).send({ error: e.error, error_description: e.description });
    });
    // Browser-based MCP clients (MCP Inspector) call these from another origin; no cookies are involved, so any origin may.
    tokens.addHook('onSend', async (_request, reply) => {
      reply.header('access-control-allow-origin', '*');
    });
    for (const url of ['/oauth/token', '/oauth/revoke', '/oauth/register', ...authorizationServerMetadataPaths(config.PUBLIC_BASE_URL)]) {
      tokens.options(url, async (_request, reply) =>
        reply
          .status(204)
          .header('access-control-allow-methods', 'GET, POST, OPTIONS')
          .header('access-control-allow-headers', 'authorization, content-type, mcp-protocol-version')
          .header('access-control-max-age', '600')
          .send(),
      );
    }
    // POST only: another method is 405 naming the allowed ones (RFC 9110 §15.5.6), in the OAuth error shape (it was 404).
    for (const url of ['/oauth/token', '/oauth/revoke', ...(config.OAUTH_DYNAMIC_REGISTRATION ? ['/oauth/register'] : [])]) {
      tokens.route({
        method: ['GET', 'PUT', 'PATCH', 'DELETE'],
        url,
        handler: async (_request, reply) =>
          reply.status(405).header('allow', 'POST, OPTIONS').headers(NO_STORE).send({ error: 'invalid_request', error_description: `${url} takes POST only.` }),
      });
    }
    await tokens.register(tokenRoutes);
    await tokens.register(metadataRoutes);
    if (config.OAUTH_DYNAMIC_REGISTRATION) await tokens.register(registrationRoutes);
  });

  await app.register(async (consent) => {
    consent.setErrorHandler(sendErrorPage);
    refuseOtherOrigins(consent);
    await consent.register(authorizeRoutes);
  });
}

export const oauth = fp(oauthServer, { name: 'oauth', dependencies: ['services', 'read-your-writes'], encapsulate: true });
