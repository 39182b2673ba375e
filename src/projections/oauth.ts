import type { DashboardSessionEvent } from '../domain/dashboardSession.ts';
import type { OAuthClientEvent, TokenEndpointAuthMethod } from '../domain/oauthClient.ts';
import type { OAuthGrantEvent } from '../domain/oauthGrant.ts';
import type { RecordedEvent } from '../ports/eventStore.ts';
import { type Projection, handles } from './projection.ts';

export interface OAuthClientDoc {
  [key: string]: unknown;
  id: string;
  teamId: string;
  name: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  deleted: boolean;
  createdAt: string;
  secretRotatedAt: string | null;
}

export interface OAuthGrantDoc {
  [key: string]: unknown;
  id: string;
  clientId: string;
  teamId: string;
  userId: string;
  siteIds: string[];
  scopes: string[];
  revoked: boolean;
  revokedReason: string | null;
  createdAt: string;
}

/** Token lookup by the SHA-256 of the token. */
export interface OAuthTokenDoc {
  [key: string]: unknown;
  id: string;
  tokenId: string;
  kind: 'access_token' | 'refresh_token';
  grantId: string;
  clientId: string;
  teamId: string;
  siteIds: string[];
  scopes: string[];
  expiresAt: string;
  revoked: boolean;
}

export interface DashboardSessionDoc {
  [key: string]: unknown;
  /** SHA-256 of the cookie's token. */
  id: string;
  sessionId: string;
  userId: string;
  teamId: string;
  expiresAt: string;
  ended: boolean;
}

async function revokeTokens(w: Parameters<Projection['handle']>[1], filter: Record<string, string>) {
  for (const token of await w.find<OAuthTokenDoc>('oauthTokens', filter)) {
    if (!token.revoked) await w.put('oauthTokens', { ...token, revoked: true });
  }
}

/** OAuth clients, grants and tokens: one projection, because a client's deletion reaches its tokens. */
export const oauthProjection: Projection = {
  name: 'oauth',
  version: 1,
  collections: ['oauthClients', 'oauthGrants', 'oauthTokens'],
  canHandle: handles([
    'OAuthClientRegistered',
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
    const event = recorded as RecordedEvent & (OAuthClientEvent | OAuthGrantEvent);
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
        return w.put('oauthClients', doc);
      }
      case 'OAuthClientSecretRotated': {
        const client = await w.get<OAuthClientDoc>('oauthClients', event.data.clientId);
        if (client) await w.put('oauthClients', { ...client, secretRotatedAt: event.data.rotatedAt });
        return;
      }
      case 'OAuthClientDeleted': {
        const client = await w.get<OAuthClientDoc>('oauthClients', event.data.clientId);
        if (client) await w.put('oauthClients', { ...client, deleted: true });
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
          revoked: false,
          revokedReason: null,
          createdAt: d.givenAt,
        };
        return w.put('oauthGrants', doc);
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
          expiresAt: d.expiresAt,
          revoked: false,
        };
        return w.put('oauthTokens', doc);
      }
      case 'RefreshTokenIssued': {
        const d = event.data;
        const grant = await w.get<OAuthGrantDoc>('oauthGrants', d.grantId);
        const doc: OAuthTokenDoc = {
          id: d.tokenHash,
          tokenId: d.tokenId,
          kind: 'refresh_token',
          grantId: d.grantId,
          clientId: d.clientId,
          teamId: grant?.teamId ?? '',
          siteIds: grant?.siteIds ?? [],
          scopes: d.scopes,
          expiresAt: d.expiresAt,
          revoked: false,
        };
        return w.put('oauthTokens', doc);
      }
      case 'RefreshTokenRotated':
      case 'TokenRevoked':
        return revokeTokens(w, { tokenId: event.data.tokenId });
      case 'GrantRevoked': {
        const grant = await w.get<OAuthGrantDoc>('oauthGrants', event.data.grantId);
        if (grant) await w.put('oauthGrants', { ...grant, revoked: true, revokedReason: event.data.reason });
        return revokeTokens(w, { grantId: event.data.grantId });
      }
    }
  },
};

export const dashboardSessionsProjection: Projection = {
  name: 'dashboardSessions',
  version: 1,
  collections: ['dashboardSessions'],
  canHandle: handles(['DashboardSessionStarted', 'DashboardSessionEnded']),
  async handle(recorded, w) {
    const event = recorded as RecordedEvent & DashboardSessionEvent;
    switch (event.type) {
      case 'DashboardSessionStarted': {
        const d = event.data;
        const doc: DashboardSessionDoc = { id: d.sessionHash, sessionId: d.sessionId, userId: d.userId, teamId: d.teamId, expiresAt: d.expiresAt, ended: false };
        return w.put('dashboardSessions', doc);
      }
      case 'DashboardSessionEnded':
        return w.remove('dashboardSessions', event.data.sessionHash);
    }
  },
};
