import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `apiKeys` read model and its lookup by hash, written by the apiKeys projection. */
export const API_KEYS = 'apiKeys';
export const API_KEYS_BY_HASH = 'apiKeysByHash';

export interface ApiKeyDoc {
  [key: string]: unknown;
  id: string;
  teamId: string;
  name: string;
  scopes: string[];
  siteId: string | null;
  keyHash: string;
  revoked: boolean;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

/** `apiKeysByHash`: the SHA-256 of a key → its id. */
export interface ApiKeyByHashDoc {
  [key: string]: unknown;
  id: string;
  apiKeyId: string;
}

export const getApiKey = (store: ReadModelStore, apiKeyId: string) => store.get<ApiKeyDoc>(API_KEYS, apiKeyId);

/** The key whose SHA-256 is `keyHash`, revoked or not. */
export async function findApiKeyByHash(store: ReadModelStore, keyHash: string): Promise<ApiKeyDoc | null> {
  const ref = await store.get<ApiKeyByHashDoc>(API_KEYS_BY_HASH, keyHash);
  return ref ? getApiKey(store, ref.apiKeyId) : null;
}

/** Oldest first. */
export const listApiKeysOfTeam = (store: ReadModelStore, teamId: string) => store.find<ApiKeyDoc>(API_KEYS, { teamId }, { sortBy: 'createdAt' });
