import { redirectUriProblem } from './oauthClient.ts';
import { DISPLAY_NAME_MESSAGE, isDisplayName } from './text.ts';

/**
 * OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, the MCP
 * authorization spec's recommended registration): the client_id is an HTTPS URL, and the JSON
 * document served there describes the client. Nothing is registered: the document is fetched when
 * the client shows up, and trusted only as far as its URL's host.
 */

/** Larger documents are refused (the draft suggests 5 KB). */
export const CLIENT_METADATA_MAX_BYTES = 5 * 1024;

/** A client metadata document the service accepted. */
export interface MetadataDocumentClient {
  clientId: string;
  /** client_name, or the URL's host when the document names none. */
  name: string;
  /** The host the client_id URL names: the only thing about this client the service can vouch for. */
  host: string;
  redirectUris: string[];
  clientUri: string | null;
}

/** Client IDs of this shape are metadata-document URLs; every other client_id is a registered client. */
export const isClientIdUrl = (clientId: string) => /^https?:\/\//i.test(clientId);

/** Why `clientId` cannot be a metadata-document URL, or null: https, a path, no fragment, credentials or dot segments. */
export function clientIdUrlProblem(clientId: string): string | null {
  if (clientId.length > 2000) return 'the client_id URL is longer than 2000 characters';
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'the client_id is not a valid URL';
  }
  if (url.protocol !== 'https:') return 'a client_id URL must use https';
  if (url.username || url.password) return 'a client_id URL must not contain credentials';
  if (clientId.includes('#')) return 'a client_id URL must not contain a fragment';
  if (url.pathname === '/' || url.pathname === '') return 'a client_id URL must have a path';
  const rawPath = clientId.slice(clientId.indexOf('/', 'https://'.length)).split(/[?#]/)[0]!;
  if (rawPath.split('/').some((segment) => segment === '.' || segment === '..')) return 'a client_id URL must not contain . or .. path segments';
  if (url.href !== clientId) return `the client_id URL is not in its normal form (${url.href})`;
  return null;
}

const stringOrNull = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** The document at `clientId` as a client, or why it cannot be one. */
export function parseClientMetadataDocument(clientId: string, document: unknown): { client: MetadataDocumentClient } | { problem: string } {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return { problem: 'the document is not a JSON object' };
  const d = document as Record<string, unknown>;
  if (d.client_id !== clientId) return { problem: 'the document\'s client_id is not the URL it was fetched from' };
  const method = d.token_endpoint_auth_method;
  // A document is public: no secret can belong to it. Absent means none here (RFC 7591's default, client_secret_basic, cannot apply).
  if (method !== undefined && method !== 'none') return { problem: 'token_endpoint_auth_method must be none (a metadata-document client has no secret)' };
  for (const forbidden of ['client_secret', 'client_secret_expires_at']) if (forbidden in d) return { problem: `the document must not contain ${forbidden}` };
  const uris = d.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u) => typeof u === 'string')) return { problem: 'redirect_uris must be a non-empty array of strings' };
  if (uris.length > 10) return { problem: 'at most 10 redirect_uris are accepted' };
  for (const uri of uris as string[]) {
    const problem = redirectUriProblem(uri);
    if (problem) return { problem: `redirect_uris: ${problem}` };
  }
  const grantTypes = d.grant_types;
  if (grantTypes !== undefined && (!Array.isArray(grantTypes) || !grantTypes.includes('authorization_code'))) {
    return { problem: 'grant_types must include authorization_code' };
  }
  const host = new URL(clientId).host;
  const name = stringOrNull(d.client_name);
  if (name !== null && name.length > 120) return { problem: 'client_name must be at most 120 characters' };
  if (name !== null && !isDisplayName(name)) return { problem: `client_name ${DISPLAY_NAME_MESSAGE}` };
  return { client: { clientId, name: name ?? host, host, redirectUris: [...new Set(uris as string[])], clientUri: stringOrNull(d.client_uri) } };
}
