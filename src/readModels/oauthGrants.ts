import type { ReadModelStore } from '../ports/readModelStore.ts';
import { OAUTH_TOKENS, type OAuthTokenDoc } from './oauthTokens.ts';

/** The `oauthGrants` read model, written by the oauth projection. */
export const OAUTH_GRANTS = 'oauthGrants';

export interface OAuthGrantDoc {
  [key: string]: unknown;
  id: string;
  clientId: string;
  teamId: string;
  userId: string;
  siteIds: string[];
  scopes: string[];
  /** RFC 8707 audience; null (or absent, in documents written before it existed) when none was named. */
  resource?: string | null;
  revoked: boolean;
  revokedReason: string | null;
  createdAt: string;
}

export const getOAuthGrant = (store: ReadModelStore, grantId: string) => store.get<OAuthGrantDoc>(OAUTH_GRANTS, grantId);

/** Every grant the client was given, revoked or not. */
export const listGrantsOfClient = (store: ReadModelStore, clientId: string) => store.find<OAuthGrantDoc>(OAUTH_GRANTS, { clientId });

/**
 * The team's grants still in force (the dashboard's connected apps), oldest first: not revoked, with
 * a token not revoked and not expired. A consent whose code was never redeemed, or whose refresh
 * token ran out, gives the app no access and is not listed.
 */
export async function listActiveGrantsOfTeam(store: ReadModelStore, teamId: string, now: Date): Promise<OAuthGrantDoc[]> {
  const [grants, tokens] = await Promise.all([
    store.find<OAuthGrantDoc>(OAUTH_GRANTS, { teamId, revoked: false }),
    store.find<OAuthTokenDoc>(OAUTH_TOKENS, { teamId, revoked: false }),
  ]);
  const at = now.toISOString();
  const live = new Set(tokens.filter((token) => token.expiresAt > at).map((token) => token.grantId));
  return grants.filter((g) => live.has(g.id)).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}
