import type { FastifyRequest } from 'fastify';
import { clientSecretMatches } from '../../commands/oauth.ts';
import type { TokenEndpointAuthMethod } from '../../domain/oauthClient.ts';
import type { CommandContext } from '../../commands/context.ts';
import { ClientMetadataError, type ClientMetadataSource } from '../../ports/clientMetadata.ts';
import { type OAuthClientView, resolveClient } from './clients.ts';
import { OAuthError } from './errors.ts';
import { SEVERAL_AUTHORIZATIONS, authorizationHeader } from '../authenticate.ts';

export type Params = Record<string, string>;

/**
 * The request's parameters, form-encoded or JSON. Every value must be a single string: a repeated
 * parameter is `invalid_request` (RFC 6749 §3.2).
 */
export function readParams(body: unknown): Params {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new OAuthError('invalid_request', 'The body must be form-encoded or a JSON object.');
  const params: Params = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (Array.isArray(value)) throw new OAuthError('invalid_request', `Parameter ${key} is repeated.`);
    if (typeof value !== 'string') throw new OAuthError('invalid_request', `Parameter ${key} must be a string.`);
    if (value !== '') params[key] = value;
  }
  return params;
}

/** client_id:client_secret from HTTP Basic, each form-urlencoded (RFC 6749 §2.3.1). */
function parseBasic(header: string): { clientId: string; secret: string } | null {
  const match = /^Basic +([A-Za-z0-9+/]+=*)$/i.exec(header.trim());
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  try {
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

export type AuthenticatedClient = OAuthClientView;

/**
 * Authenticates the client by exactly one method, which must be the one it registered (`none` for
 * a metadata-document client, whose document is fetched or taken from the cache).
 */
export async function authenticateClient(
  services: CommandContext & { clientMetadata: ClientMetadataSource },
  request: FastifyRequest,
  params: Params,
): Promise<AuthenticatedClient> {
  const header = authorizationHeader(request.raw);
  if (header === null) throw new OAuthError('invalid_request', SEVERAL_AUTHORIZATIONS);
  let method: TokenEndpointAuthMethod;
  let clientId: string | undefined;
  let secret: string | undefined;
  const basic = header !== undefined;
  if (header !== undefined) {
    const parsed = parseBasic(header);
    if (!parsed) throw new OAuthError('invalid_client', 'The Authorization header is not valid HTTP Basic client authentication.', 401, true);
    if (params.client_secret !== undefined) throw new OAuthError('invalid_request', 'Use one client authentication method, not two.');
    if (params.client_id !== undefined && params.client_id !== parsed.clientId) throw new OAuthError('invalid_request', 'client_id does not match the Authorization header.');
    method = 'client_secret_basic';
    clientId = parsed.clientId;
    secret = parsed.secret;
  } else if (params.client_secret !== undefined) {
    method = 'client_secret_post';
    clientId = params.client_id;
    secret = params.client_secret;
  } else {
    method = 'none';
    clientId = params.client_id;
  }
  const fail = (description: string) => new OAuthError('invalid_client', description, 401, basic);
  if (!clientId) throw fail('Client authentication is missing: send client_id.');
  let client: OAuthClientView | null;
  try {
    client = await resolveClient(services, services.clientMetadata, clientId);
  } catch (error) {
    if (error instanceof ClientMetadataError) throw fail(`The client metadata document ${error.forCaller()}.`);
    throw error;
  }
  if (!client) throw fail('Unknown client.');
  if (client.tokenEndpointAuthMethod !== method) throw fail(`This client must authenticate with ${client.tokenEndpointAuthMethod}.`);
  if (method !== 'none' && !clientSecretMatches(client, secret ?? '')) throw fail('Client authentication failed.');
  return client;
}
