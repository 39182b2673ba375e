import { toDomainEvent } from '../lib/parseEvent.ts';
import { DASHBOARD_SESSIONS, type DashboardSessionDoc } from '../readModels/dashboardSessions.ts';
import { OAUTH_CLIENTS, type OAuthClientDoc } from '../readModels/oauthClients.ts';
import { OAUTH_GRANTS, type OAuthGrantDoc } from '../readModels/oauthGrants.ts';
import { OAUTH_TOKENS, type OAuthTokenDoc } from '../readModels/oauthTokens.ts';
import { type Projection, handles } from './projection.ts';

async function revokeTokens(w: Parameters<Projection['handle']>[1], filter: Record<string, string>) {
  for (const token of await w.find<OAuthTokenDoc>(OAUTH_TOKENS, filter)) {
    if (!token.revoked) await w.put(OAUTH_TOKENS, { ...token, revoked: true });
  }
}

/** OAuth clients, grants and tokens: one projection, because a client's deletion reaches its tokens. */
export const oauthProjection: Projection = {
  name: 'oauth',
  version: 1,
  collections: [OAUTH_CLIENTS, OAUTH_GRANTS, OAUTH_TOKENS],
  canHandle: handles([
    'OAuthClientRegistered',
    'OAuthClientRegisteredDynamically',
    'OAuthClientSecretRotated',
    'OAuthClientDeleted',
    'ConsentGiven',
    'AccessTokenIssued',
    'RefreshTokenIssued',
    'RefreshTokenRotated',
    'TokenRevoked',
    'GrantRevoked',
  ]),
  async handle(recorded, w) {
    const event = toDomainEvent(recorded);
    if (!event) return;
    switch (event.type) {
      case 'OAuthClientRegistered': {
        const d = event.data;
        const doc: OAuthClientDoc = {
          id: d.clientId,
          teamId: d.teamId,
          name: d.name,
          redirectUris: d.redirectUris,
          tokenEndpointAuthMethod: d.tokenEndpointAuthMethod,
          deleted: false,
          createdAt: d.registeredAt,
          secretRotatedAt: null,
        };
        return w.put(OAUTH_CLIENTS, doc);
      }
      case 'OAuthClientRegisteredDynamically': {
        const d = event.data;
        const doc: OAuthClientDoc = {
          id: d.clientId,
          teamId: null,
          name: d.name,
          redirectUris: d.redirectUris,
          tokenEndpointAuthMethod: 'none',
          deleted: false,
          createdAt: d.registeredAt,
          secretRotatedAt: null,
        };
        return w.put(OAUTH_CLIENTS, doc);
      }
      case 'OAuthClientSecretRotated': {
        const client = await w.get<OAuthClientDoc>(OAUTH_CLIENTS, event.data.clientId);
        if (client) await w.put(OAUTH_CLIENTS, { ...client, secretRotatedAt: event.data.rotatedAt });
        return;
      }
      case 'OAuthClientDeleted': {
        const client = await w.get<OAuthClientDoc>(OAUTH_CLIENTS, event.data.clientId);
        if (client) await w.put(OAUTH_CLIENTS, { ...client, deleted: true });
        return revokeTokens(w, { clientId: event.data.clientId });
      }
      case 'ConsentGiven': {
        const d = event.data;
        const doc: OAuthGrantDoc = {
          id: d.grantId,
          clientId: d.clientId,
          teamId: d.teamId,
          userId: d.userId,
          siteIds: d.siteIds,
          scopes: d.scopes,
          resource: d.resource,
          revoked: false,
          revokedReason: null,
          createdAt: d.givenAt,
        };
        return w.put(OAUTH_GRANTS, doc);
      }
      case 'AccessTokenIssued': {
        const d = event.data;
        const doc: OAuthTokenDoc = {
          id: d.tokenHash,
          tokenId: d.tokenId,
          kind: 'access_token',
          grantId: d.grantId,
          clientId: d.clientId,
          teamId: d.teamId,
          siteIds: d.siteIds,
          scopes: d.scopes,
          resource: d.resource,
          expiresAt: d.expiresAt,
          revoked: false,
        };
        return w.put(OAUTH_TOKENS, doc);
      }
      case 'RefreshTokenIssued': {
        const d = event.data;
        const grant = await w.get<OAuthGrantDoc>(OAUTH_GRANTS, d.grantId);
        const doc: OAuthTokenDoc = {
          id: d.tokenHash,
          tokenId: d.tokenId,
          kind: 'refresh_token',
          grantId: d.grantId,
          clientId: d.clientId,
          teamId: grant?.teamId ?? '',
          siteIds: grant?.siteIds ?? [],
          scopes: d.scopes,
          resource: grant?.resource ?? null,
          expiresAt: d.expiresAt,
          revoked: false,
        };
        return w.put(OAUTH_TOKENS, doc);
      }
      case 'RefreshTokenRotated':
      case 'TokenRevoked':
        return revokeTokens(w, { tokenId: event.data.tokenId });
      case 'GrantRevoked': {
        const grant = await w.get<OAuthGrantDoc>(OAUTH_GRANTS, event.data.grantId);
        if (grant) await w.put(OAUTH_GRANTS, { ...grant, revoked: true, revokedReason: event.data.reason });
        return revokeTokens(w, { grantId: event.data.grantId });
      }
    }
  },
};

export const dashboardSessionsProjection: Projection = {
  name: 'dashboardSessions',
  // Still 1: a document written before `credential` has none, and a session without one is refused anyway.
  version: 1,
  collections: [DASHBOARD_SESSIONS],
  canHandle: handles(['DashboardSessionStarted', 'DashboardSessionEnded']),
  async handle(recorded, w) {
    const event = toDomainEvent(recorded);
    if (!event) return;
    switch (event.type) {
      case 'DashboardSessionStarted': {
        const d = event.data;
        const doc: DashboardSessionDoc = { id: d.sessionHash, sessionId: d.sessionId, userId: d.userId, teamId: d.teamId, credential: d.credential ?? null, expiresAt: d.expiresAt, ended: false };
        return w.put(DASHBOARD_SESSIONS, doc);
      }
      case 'DashboardSessionEnded':
        return w.remove(DASHBOARD_SESSIONS, event.data.sessionHash);
    }
  },
};
