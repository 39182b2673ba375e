import { loadOAuthClient } from '../../commands/oauth.ts';
import type { CommandContext } from '../../commands/context.ts';
import { clientIdUrlProblem, isClientIdUrl } from '../../domain/clientMetadataDocument.ts';
import type { TokenEndpointAuthMethod } from '../../domain/oauthClient.ts';
import { ClientMetadataError, type ClientMetadataSource } from '../../ports/clientMetadata.ts';

/** The three ways a client comes to be known to the authorization server. */
export type ClientOrigin =
  /** registered by a team admin in the dashboard's OAuth apps area */
  | 'dashboard'
  /** registered itself at /oauth/register (RFC 7591) */
  | 'dynamic'
  /** its client_id is the HTTPS URL of its metadata document */
  | 'metadata_document';

/** A client as the authorize and token endpoints see it, whatever its origin. */
export interface OAuthClientView {
  clientId: string;
  name: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  secretHash: string | null;
  /** The team whose owners and admins may approve it; null: any team's. */
  teamId: string | null;
  origin: ClientOrigin;
  /** The host a metadata-document client's client_id names, shown on the consent screen; null otherwise. */
  host: string | null;
}

/**
 * The client a client_id names, or null when there is none. A URL client_id is a Client ID Metadata
 * Document: fetched (cached) and validated; a document that cannot be used throws ClientMetadataError
 * with the reason, for the consent page or the token endpoint's invalid_client.
 */
export async function resolveClient(ctx: CommandContext, documents: ClientMetadataSource, clientId: string): Promise<OAuthClientView | null> {
  if (isClientIdUrl(clientId)) {
    const problem = clientIdUrlProblem(clientId);
    if (problem) throw new ClientMetadataError(problem);
    const doc = await documents.load(clientId);
    return {
      clientId,
      name: doc.name,
      redirectUris: doc.redirectUris,
      tokenEndpointAuthMethod: 'none',
      secretHash: null,
      teamId: null,
      origin: 'metadata_document',
      host: doc.host,
    };
  }
  const client = await loadOAuthClient(ctx, clientId);
  if (!client) return null;
  return {
    clientId: client.clientId,
    name: client.name,
    redirectUris: client.redirectUris,
    tokenEndpointAuthMethod: client.tokenEndpointAuthMethod,
    secretHash: client.secretHash,
    teamId: client.teamId,
    origin: client.teamId === null ? 'dynamic' : 'dashboard',
    host: null,
  };
}
