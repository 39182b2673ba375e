import type { FastifyInstance } from 'fastify';
import { TOKEN_ENDPOINT_AUTH_METHODS } from '../../domain/oauthClient.ts';
import { SCOPES } from '../../domain/scopes.ts';
import { wellKnownPaths } from './resources.ts';

/**
 * RFC 8414 metadata; the issuer is PUBLIC_BASE_URL, read per request. MCP clients read
 * `client_id_metadata_document_supported` (an HTTPS URL may be the client_id) and
 * `registration_endpoint` (RFC 7591, present only when the operator enabled it).
 */
export function authorizationServerMetadata(issuer: string, options: { dynamicRegistration: boolean }) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    ...(options.dynamicRegistration ? { registration_endpoint: `${issuer}/oauth/register` } : {}),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    scopes_supported: [...SCOPES],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
  };
}

/** Where the metadata is served: the RFC 8414 location, and the one under the issuer's path (docs/oauth.md). */
export const authorizationServerMetadataPaths = (issuer: string) => wellKnownPaths(issuer, 'oauth-authorization-server');

export async function metadataRoutes(app: FastifyInstance) {
  for (const url of authorizationServerMetadataPaths(app.config.PUBLIC_BASE_URL)) {
    app.get(url, async function authorizationServerMetadataRoute(_request, reply) {
      return reply
        .header('cache-control', 'public, max-age=300')
        .header('access-control-allow-origin', '*')
        .send(authorizationServerMetadata(app.config.PUBLIC_BASE_URL, { dynamicRegistration: app.config.OAUTH_DYNAMIC_REGISTRATION }));
    });
  }
}
