import { type Decider, assertNever } from './decider.ts';

/** OAuth clients registered in the dashboard's OAuth apps area, one stream each. */
export const oauthClientStream = (clientId: string) => `oauth_client-${clientId}`;

export const TOKEN_ENDPOINT_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];

export interface OAuthClientFields {
  clientId: string;
  teamId: string;
  name: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** SHA-256 (hex) of the client secret; null for public clients. The secret itself is never stored. */
  secretHash: string | null;
}

/** What a client sends to RFC 7591 dynamic registration and the service keeps: public clients only. */
export interface DynamicClientFields {
  clientId: string;
  name: string;
  redirectUris: string[];
  clientUri: string | null;
}

export type OAuthClientEvent =
  | { type: 'OAuthClientRegistered'; data: OAuthClientFields & { registeredBy: string; registeredAt: string } }
  | { type: 'OAuthClientRegisteredDynamically'; data: DynamicClientFields & { registeredAt: string } }
  | { type: 'OAuthClientSecretRotated'; data: { clientId: string; teamId: string; secretHash: string; rotatedBy: string; rotatedAt: string } }
  | { type: 'OAuthClientDeleted'; data: { clientId: string; teamId: string; deletedBy: string; deletedAt: string } };

export type OAuthClientCommand =
  | { type: 'RegisterOAuthClient'; data: OAuthClientFields & { userId: string; now: string } }
  | { type: 'RegisterOAuthClientDynamically'; data: DynamicClientFields & { now: string } }
  | { type: 'RotateOAuthClientSecret'; data: { clientId: string; secretHash: string; userId: string; now: string } }
  | { type: 'DeleteOAuthClient'; data: { clientId: string; userId: string; now: string } };

/**
 * A client as its stream says. `teamId` is the team that registered it in the dashboard; null for a
 * client that registered itself (RFC 7591), which belongs to no team: the dashboard cannot rotate or
 * delete it, and any team's owner or admin may approve it.
 */
export type ClientFields = Omit<OAuthClientFields, 'teamId'> & { teamId: string | null };
export type ActiveOAuthClient = { status: 'active' } & ClientFields;
export type OAuthClientState = { status: 'none' } | ActiveOAuthClient | ({ status: 'deleted' } & ClientFields);

export class OAuthClientRuleError extends Error {
  constructor(readonly reason: 'exists' | 'not_found' | 'public_client' | 'invalid') {
    super(
      reason === 'exists'
        ? 'OAuth client already exists'
        : reason === 'not_found'
          ? 'OAuth client not found'
          : reason === 'public_client'
            ? 'a public client has no secret to rotate'
            : 'invalid OAuth client',
    );
  }
}

export const oauthClientDecider: Decider<OAuthClientState, OAuthClientCommand, OAuthClientEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'OAuthClientRegistered': {
        const { registeredBy: _by, registeredAt: _at, ...fields } = event.data;
        return { status: 'active', ...fields };
      }
      case 'OAuthClientRegisteredDynamically': {
        const { clientId, name, redirectUris } = event.data;
        return { status: 'active', clientId, teamId: null, name, redirectUris, tokenEndpointAuthMethod: 'none', secretHash: null };
      }
      case 'OAuthClientSecretRotated':
        return state.status === 'active' ? { ...state, secretHash: event.data.secretHash } : state;
      case 'OAuthClientDeleted':
        return state.status === 'none' ? state : { ...state, status: 'deleted' };
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'RegisterOAuthClient': {
        if (state.status !== 'none') throw new OAuthClientRuleError('exists');
        const { userId, now, ...fields } = command.data;
        if (fields.redirectUris.length === 0) throw new OAuthClientRuleError('invalid');
        if ((fields.tokenEndpointAuthMethod === 'none') !== (fields.secretHash === null)) throw new OAuthClientRuleError('invalid');
        return [{ type: 'OAuthClientRegistered', data: { ...fields, registeredBy: userId, registeredAt: now } }];
      }
      case 'RegisterOAuthClientDynamically': {
        if (state.status !== 'none') throw new OAuthClientRuleError('exists');
        const { now, ...fields } = command.data;
        if (fields.redirectUris.length === 0) throw new OAuthClientRuleError('invalid');
        return [{ type: 'OAuthClientRegisteredDynamically', data: { ...fields, registeredAt: now } }];
      }
      case 'RotateOAuthClientSecret': {
        if (state.status !== 'active' || state.teamId === null) throw new OAuthClientRuleError('not_found');
        if (state.tokenEndpointAuthMethod === 'none') throw new OAuthClientRuleError('public_client');
        const { clientId, secretHash, userId, now } = command.data;
        return [{ type: 'OAuthClientSecretRotated', data: { clientId, teamId: state.teamId, secretHash, rotatedBy: userId, rotatedAt: now } }];
      }
      case 'DeleteOAuthClient': {
        if (state.status === 'none' || state.teamId === null) throw new OAuthClientRuleError('not_found');
        if (state.status === 'deleted') return [];
        const { clientId, userId, now } = command.data;
        return [{ type: 'OAuthClientDeleted', data: { clientId, teamId: state.teamId, deletedBy: userId, deletedAt: now } }];
      }
      default:
        return assertNever(command);
    }
  },
};

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why a redirect URI cannot be registered, or null when it can: an absolute HTTPS URL, or plain
 * HTTP on the loopback interface for native and desktop clients (RFC 8252 §7.3); no fragment, no credentials.
 */
export function redirectUriProblem(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${uri} is not an absolute URL`;
  }
  if (uri.length > 2000) return 'a redirect URI must be at most 2000 characters';
  if (url.hash || uri.includes('#')) return `${uri} must not contain a fragment`;
  if (url.username || url.password) return `${uri} must not contain credentials`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return `${uri} must use HTTPS (plain HTTP is allowed only for localhost, 127.0.0.1 or [::1])`;
}
