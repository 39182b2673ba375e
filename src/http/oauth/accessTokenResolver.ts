import { ACCESS_TOKEN_SHAPE } from '../../commands/oauth.ts';
import { sha256Hex } from '../../commands/credentials.ts';
import { isClientIdUrl } from '../../domain/clientMetadataDocument.ts';
import { getOAuthClient } from '../../readModels/oauthClients.ts';
import { getOAuthGrant } from '../../readModels/oauthGrants.ts';
import { getOAuthTokenByHash } from '../../readModels/oauthTokens.ts';
import { getUser } from '../../readModels/users.ts';
import { standsBehindApps } from '../../domain/team.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import type { CredentialResolver } from '../credentials.ts';

/**
 * Bearer `svc_oauth_…` tokens: looked up by SHA-256; expired, revoked or orphaned tokens, and those of
 * a grant whose authorizer left the team or became a member, resolve to nothing (401).
 */
export function oauthAccessTokenResolver(
  services: { readModels: ReadModelStore; clock: Clock },
  /** Brings the read models up to the store's head: a revocation or client deletion elsewhere counts at once. */
  catchUp: () => Promise<void> = async () => {},
  /** Called (and awaited) for a grant refused because its authorizer left or became a member: revokes it and deletes what it subscribed. */
  onAuthorizerGone: (grantId: string) => Promise<void> = async () => {},
): CredentialResolver {
  return {
    accepts: (token) => ACCESS_TOKEN_SHAPE.test(token),
    async resolve(token) {
      await catchUp();
      const token_ = await getOAuthTokenByHash(services.readModels, sha256Hex(token));
      if (!token_ || token_.kind !== 'access_token' || token_.revoked) return null;
      if (Date.parse(token_.expiresAt) <= services.clock.now().getTime()) return null;
      // A metadata-document client (an https client_id) has no registration to delete: its grant is what can be revoked.
      const [client, grant] = await Promise.all([
        isClientIdUrl(token_.clientId) ? null : getOAuthClient(services.readModels, token_.clientId),
        getOAuthGrant(services.readModels, token_.grantId),
      ]);
      if ((!isClientIdUrl(token_.clientId) && (!client || client.deleted)) || !grant || grant.revoked) return null;
      // The app's access lasts as long as its authorizer's: still in the team, and an owner or admin.
      if (!standsBehindApps(await getUser(services.readModels, grant.userId), grant.teamId)) {
        await onAuthorizerGone(grant.id);
        return null;
      }
      return {
        kind: 'oauth_access_token',
        id: token_.tokenId,
        teamId: token_.teamId,
        scopes: new Set(token_.scopes),
        siteIds: token_.siteIds,
        oauthClientId: token_.clientId,
        resource: token_.resource ?? null,
      };
    },
  };
}
