import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `oauthTokens` read model, written by the oauth projection. */
export const OAUTH_TOKENS = 'oauthTokens';

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
  /** RFC 8707 audience; null (or absent, in documents written before it existed) when none was named. */
  resource?: string | null;
  expiresAt: string;
  revoked: boolean;
}

/** The stored token whose SHA-256 is `tokenHash`, revoked or not. */
export const getOAuthTokenByHash = (store: ReadModelStore, tokenHash: string) => store.get<OAuthTokenDoc>(OAUTH_TOKENS, tokenHash);
