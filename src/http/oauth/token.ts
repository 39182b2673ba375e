import { inRequest, onItsOwn } from '../../commands/context.ts';
import type { FastifyInstance } from 'fastify';
import { ACCESS_TOKEN_SHAPE, AuthorizerGoneError, redeemAuthorizationCode, refreshAccessToken, revokeToken } from '../../commands/oauth.ts';
import { OAuthGrantRuleError } from '../../domain/oauthGrant.ts';
import { isScope } from '../../domain/scopes.ts';
import { sha256Hex } from '../../commands/credentials.ts';
import { getOAuthTokenByHash } from '../../readModels/oauthTokens.ts';
import { credentialCatchUp } from '../credentialsInForce.ts';
import { authenticateClient, readParams } from './clientAuthentication.ts';
import { deleteSubscriptionsOfDepartedGrant } from './departedAuthorizer.ts';
import { NO_STORE, OAuthError } from './errors.ts';
import { servedResource } from './resources.ts';
import { latestPosition } from '../../lib/latestPosition.ts';

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** A parameter the grant cannot do without: missing is invalid_request. */
function requiredParam(params: Record<string, string>, name: string): string {
  const value = params[name];
  if (value === undefined) throw new OAuthError('invalid_request', `Missing parameter ${name}.`);
  return value;
}

function asOAuthError(error: unknown): unknown {
  return error instanceof OAuthGrantRuleError ? new OAuthError(error.error, error.message) : error;
}

/** POST /oauth/token (RFC 6749 §3.2, OAuth 2.1) and POST /oauth/revoke (RFC 7009). */
export async function tokenRoutes(app: FastifyInstance) {
  // An access token issued by another API node is in this node's read model only once it has caught up (as bearer authentication does).
  const catchUp = credentialCatchUp(app, app.config.CREDENTIAL_CATCH_UP_MS);
  app.post('/oauth/token', async function tokenEndpoint(request, reply) {
    const ctx = inRequest(app, request.id);
    const params = readParams(request.body);
    const grantType = params.grant_type;
    if (!grantType) throw new OAuthError('invalid_request', 'Missing parameter grant_type.');
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
      // Authenticate first: an unauthenticated caller learns nothing but invalid_client.
      await authenticateClient(ctx, request, params);
      throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported.`);
    }
    const client = await authenticateClient(ctx, request, params);
    let resource: string | null = null;
    if (params.resource !== undefined) {
      const served = servedResource(app.config.PUBLIC_BASE_URL, params.resource);
      if ('problem' in served) throw new OAuthError('invalid_target', served.problem);
      resource = served.resource;
    }
    try {
      if (grantType === 'authorization_code') {
        const code = requiredParam(params, 'code');
        // Required when the authorization request named one (the grant decides: RFC 6749 §4.1.3).
        const redirectUri = params.redirect_uri ?? null;
        const codeVerifier = requiredParam(params, 'code_verifier');
        if (!CODE_VERIFIER.test(codeVerifier)) throw new OAuthError('invalid_grant', 'code_verifier must be 43 to 128 unreserved characters.');
        const { response, position } = await redeemAuthorizationCode(ctx, { code, clientId: client.clientId, redirectUri, codeVerifier, resource });
        await app.waitForWrite(position, 'answer');
        return reply.status(200).headers(NO_STORE).send(response);
      }
      const refreshToken = requiredParam(params, 'refresh_token');
      let scopes: string[] | null = null;
      if (params.scope !== undefined) {
        scopes = [...new Set(params.scope.split(' ').filter(Boolean))];
        const unknown = scopes.filter((s) => !isScope(s));
        if (scopes.length === 0 || unknown.length > 0) throw new OAuthError('invalid_scope', `Unknown scope ${unknown.join(' ')}.`);
      }
      const { response, position } = await refreshAccessToken(ctx, { refreshToken, clientId: client.clientId, scopes, resource });
      await app.waitForWrite(position, 'answer');
      return reply.status(200).headers(NO_STORE).send(response);
    } catch (error) {
      if (error instanceof AuthorizerGoneError) {
        // The answer is invalid_grant whatever happens here; `team remove-user` run again finishes a sweep that failed.
        const swept = await deleteSubscriptionsOfDepartedGrant(onItsOwn(ctx), { id: error.grantId, teamId: error.teamId }, error.reason).catch((err: unknown) => {
          request.log.warn({ err, grantId: error.grantId }, 'deleting the subscriptions of an app whose authorizer left failed');
          return null;
        });
        await app.waitForWrite(latestPosition(swept, error.position), 'answer');
      }
      throw asOAuthError(error);
    }
  });

  app.post('/oauth/revoke', async function revocationEndpoint(request, reply) {
    const ctx = inRequest(app, request.id);
    const params = readParams(request.body);
    const client = await authenticateClient(ctx, request, params);
    const token = requiredParam(params, 'token');
    // RFC 7009 §2.2: a 200 means the token is revoked, so an access token must be found wherever it was issued.
    const isAccessToken = ACCESS_TOKEN_SHAPE.test(token);
    if (isAccessToken) await catchUp();
    const stored = isAccessToken ? await getOAuthTokenByHash(app.readModels, sha256Hex(token)) : null;
    const { position } = await revokeToken(ctx, { token, clientId: client.clientId, stored }).catch((error: unknown) => {
      throw asOAuthError(error);
    });
    await app.waitForWrite(position);
    return reply.status(200).headers(NO_STORE).send();
  });
}
