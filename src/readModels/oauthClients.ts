import type { TokenEndpointAuthMethod } from '../domain/oauthClient.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `oauthClients` read model, written by the oauth projection. */
export const OAUTH_CLIENTS = 'oauthClients';

export interface OAuthClientDoc {
  [key: string]: unknown;
  id: string;
  /** null for a client that registered itself (RFC 7591): it belongs to no team. */
  teamId: string | null;
  name: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  deleted: boolean;
  createdAt: string;
  secretRotatedAt: string | null;
}

export const getOAuthClient = (store: ReadModelStore, clientId: string) => store.get<OAuthClientDoc>(OAUTH_CLIENTS, clientId);

/** The team's clients that are not deleted, oldest first. */
export async function listOAuthClientsOfTeam(store: ReadModelStore, teamId: string): Promise<OAuthClientDoc[]> {
  return (await store.find<OAuthClientDoc>(OAUTH_CLIENTS, { teamId }, { sortBy: 'createdAt' })).filter((c) => !c.deleted);
}
