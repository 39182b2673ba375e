import { API_KEYS, API_KEYS_BY_HASH } from '../readModels/apiKeys.ts';
import { SITES, type SiteDoc } from '../readModels/sites.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';
import type { Credential, CredentialResolver } from './credentials.ts';

/** Entries kept per cache; the oldest is dropped first. */
const MAX_ENTRIES = 10_000;
/**
 * A cached API key is resolved again after this long even if nothing changed, so the resolver
 * still sees the key's use (its last-used time is recorded at most once a minute).
 */
export const CREDENTIAL_CACHE_TTL_MS = 10_000;

interface Entry<T> {
  value: T;
  version: number;
  at: number;
}

/**
 * A small map of results that stay valid while `version()` is unchanged (and, with `ttlMs`, for
 * that long at most). `version` must be read before the value is computed: a change during the
 * computation then leaves an entry that the next look-up already sees as stale.
 */
function versionedCache<T>(version: () => number, now: () => number, ttlMs: number) {
  const entries = new Map<string, Entry<T>>();
  return {
    async get(key: string, load: () => Promise<T | null>): Promise<T | null> {
      const v = version();
      const hit = entries.get(key);
      if (hit && hit.version === v && now() - hit.at < ttlMs) return hit.value;
      const value = await load();
      entries.delete(key);
      if (value !== null) {
        if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
        entries.set(key, { value, version: v, at: now() });
      }
      return value;
    },
    clear: () => entries.clear(),
  };
}

/**
 * The API key resolver with its answers remembered while the `apiKeys` and `apiKeysByHash` read
 * models are unchanged in this process, so a busy key costs a map look-up instead of a hash, two
 * document copies and a scope set per request. Revocation is honoured as before: revoking a key
 * changes the `apiKeys` read model, which drops every remembered answer, the moment the read model
 * has it (the same moment the uncached resolver would have refused the key). Unknown keys are
 * never remembered. Without `collectionVersion` on the store, nothing is cached.
 */
export function cachedApiKeyResolver(
  resolver: CredentialResolver,
  readModels: ReadModelStore,
  now: () => number = Date.now,
): CredentialResolver & { clear(): void } {
  const versionOf = readModels.collectionVersion?.bind(readModels);
  if (!versionOf) return { accepts: (t) => resolver.accepts(t), resolve: (t) => resolver.resolve(t), clear: () => {} };
  // Both stamps only grow, so their sum changes whenever either does.
  const cache = versionedCache<Credential>(() => versionOf(API_KEYS) + versionOf(API_KEYS_BY_HASH), now, CREDENTIAL_CACHE_TTL_MS);
  return {
    accepts: (token) => resolver.accepts(token),
    resolve: (token) => cache.get(token, async () => freezeCredential(await resolver.resolve(token))),
    clear: cache.clear,
  };
}

/**
 * `getSite` remembered while the `sites` read model is unchanged in this process. The document is
 * shared by every request that reads it, so it is frozen (a route that changed it would throw).
 */
export function cachedSiteLoader(load: (siteId: string) => Promise<SiteDoc | null>, readModels: ReadModelStore): (siteId: string) => Promise<SiteDoc | null> {
  const versionOf = readModels.collectionVersion?.bind(readModels);
  if (!versionOf) return load;
  const cache = versionedCache<SiteDoc>(() => versionOf(SITES), Date.now, Number.POSITIVE_INFINITY);
  return (siteId) => cache.get(siteId, async () => deepFreeze(await load(siteId)));
}

function freezeCredential(credential: Credential | null): Credential | null {
  if (!credential) return null;
  if (credential.siteIds) Object.freeze(credential.siteIds);
  return Object.freeze(credential);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
