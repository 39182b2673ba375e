import { inRequest } from '../../commands/context.ts';
import type { FastifyInstance } from 'fastify';
import { OAuthClientInputError, registerOAuthClientDynamically } from '../../commands/oauth.ts';
import { redirectUriProblem } from '../../domain/oauthClient.ts';
import { NO_STORE, OAuthError } from './errors.ts';

const HOUR_MS = 3_600_000;

/** RFC 7591 client metadata the service reads; everything else a client sends is ignored (§3.2.1 allows it). */
function readMetadata(body: unknown) {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object of client metadata.');
  const m = body as Record<string, unknown>;
  // A member left out takes its default; one sent as null is a value of the wrong type (RFC 7591 §2), refused.
  const method = m.token_endpoint_auth_method === undefined ? 'none' : m.token_endpoint_auth_method;
  if (method !== 'none') {
    throw new OAuthError('invalid_client_metadata', 'Only public clients may register themselves: token_endpoint_auth_method must be none (PKCE only).');
  }
  const uris = m.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u) => typeof u === 'string')) {
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris must be a non-empty array of URIs.');
  }
  for (const uri of uris as string[]) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', problem);
  }
  const grantTypes = m.grant_types === undefined ? ['authorization_code'] : m.grant_types;
  if (!Array.isArray(grantTypes) || !grantTypes.every((g) => g === 'authorization_code' || g === 'refresh_token') || !grantTypes.includes('authorization_code')) {
    throw new OAuthError('invalid_client_metadata', 'grant_types may name authorization_code and refresh_token only, and must include authorization_code.');
  }
  const responseTypes = m.response_types === undefined ? ['code'] : m.response_types;
  if (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== 'code')) throw new OAuthError('invalid_client_metadata', 'response_types may name code only.');
  const name = m.client_name === undefined ? 'Unnamed app' : m.client_name;
  if (typeof name !== 'string') throw new OAuthError('invalid_client_metadata', 'client_name must be a string.');
  const clientUri = m.client_uri;
  if (clientUri !== undefined && (typeof clientUri !== 'string' || !/^https:\/\//.test(clientUri))) throw new OAuthError('invalid_client_metadata', 'client_uri must be an https URL.');
  return { name, redirectUris: uris as string[], clientUri: clientUri ?? null };
}

/**
 * POST /oauth/register (RFC 7591), registered only when OAUTH_DYNAMIC_REGISTRATION=true: public
 * clients only, at most OAUTH_DYNAMIC_REGISTRATION_PER_HOUR registrations per client address per
 * clock hour. The client belongs to no team until a team's owner or admin approves it.
 */
export async function registrationRoutes(app: FastifyInstance) {
  app.post('/oauth/register', async function dynamicClientRegistration(request, reply) {
    const limit = app.config.OAUTH_DYNAMIC_REGISTRATION_PER_HOUR;
    const now = app.clock.now().getTime();
    const window = Math.floor(now / HOUR_MS);
    const key = `oauth-register:${request.ip}:${window}`;
    const count = await app.counters.increment(key, 1, new Date((window + 2) * HOUR_MS));
    if (count > limit) {
      reply.header('retry-after', String(Math.ceil(((window + 1) * HOUR_MS - now) / 1000)));
      throw new OAuthError('temporarily_unavailable', `At most ${limit} client registrations per hour from one address.`);
    }
    const metadata = readMetadata(request.body);
    try {
      const r = await registerOAuthClientDynamically(inRequest(app, request.id), metadata);
      await app.waitForWrite(r.position);
      return reply
        .status(201)
        .headers(NO_STORE)
        .send({
          client_id: r.clientId,
          client_id_issued_at: Math.floor(Date.parse(r.issuedAt) / 1000),
          client_name: r.name,
          redirect_uris: r.redirectUris,
          ...(metadata.clientUri ? { client_uri: metadata.clientUri } : {}),
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        });
    } catch (error) {
      if (error instanceof OAuthClientInputError) throw new OAuthError('invalid_client_metadata', error.message);
      throw error;
    }
  });
}
