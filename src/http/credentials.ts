import { timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../commands/credentials.ts';
import { recordApiKeyUse } from '../commands/tenancy.ts';
import { API_KEY_USE_RESOLUTION_MS } from '../domain/apiKey.ts';
import { type ApiKeyDoc, findApiKeyByHash } from '../readModels/apiKeys.ts';
import type { CommandContext } from '../commands/context.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

/** What every kind of bearer credential resolves to. OAuth access tokens resolve to the same shape. */
export interface Credential {
  kind: 'api_key' | 'oauth_access_token';
  /** API key id, or OAuth token id. */
  id: string;
  teamId: string;
  scopes: ReadonlySet<string>;
  /** Sites this credential may reach; null for every site of the team. */
  siteIds: readonly string[] | null;
  /** The OAuth client behind an access token; null for API keys. */
  oauthClientId: string | null;
  /** The resource an access token was issued for (RFC 8707 audience); null for API keys and tokens that name none. */
  resource: string | null;
}

export interface CredentialResolver {
  /** Whether this resolver understands the token's shape (by prefix). */
  accepts(token: string): boolean;
  resolve(token: string): Promise<Credential | null>;
}

const API_KEY_SHAPE = /^svc_[0-9a-f]{64}$/;

export function apiKeyResolver(
  services: CommandContext & { readModels: ReadModelStore },
  onError: (error: unknown) => void,
  /** Brings the read models up to the store's head (see credentialsInForce.ts); called before every lookup. */
  catchUp: () => Promise<void> = async () => {},
): CredentialResolver {
  const lastRecorded = new Map<string, number>();
  return {
    accepts: (token) => API_KEY_SHAPE.test(token),
    async resolve(token) {
      const hash = sha256Hex(token);
      // A key created or revoked a moment ago (by the CLI, another process) counts from then on.
      await catchUp();
      const key = await findApiKeyByHash(services.readModels, hash);
      if (!key || key.revoked || !timingSafeEqual(Buffer.from(key.keyHash), Buffer.from(hash))) return null;
      noteUse(key);
      return { kind: 'api_key', id: key.id, teamId: key.teamId, scopes: new Set(key.scopes), siteIds: key.siteId ? [key.siteId] : null, oauthClientId: null, resource: null };
    },
  };

  /** Last-used time is an event, written at most once a minute per key and never on the request's path. */
  function noteUse(key: ApiKeyDoc) {
    const now = services.clock.now().getTime();
    const last = Math.max(lastRecorded.get(key.id) ?? 0, key.lastUsedAt ? Date.parse(key.lastUsedAt) : 0);
    if (now - last < API_KEY_USE_RESOLUTION_MS) return;
    lastRecorded.set(key.id, now);
    recordApiKeyUse(services, key.id).catch(onError);
  }
}
