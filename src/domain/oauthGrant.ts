import { type Decider, assertNever } from './decider.ts';
import { ImmutableMap } from './immutableMap.ts';

/**
 * One grant per consent: the authorization code it issued and every token descended from it.
 * All single-use rules (the code, refresh rotation) are decided on this stream and appended with
 * its expected revision, so two concurrent redemptions cannot both win.
 */
export const oauthGrantStream = (grantId: string) => `oauth_grant-${grantId}`;

/** Authorization codes live 60 seconds, access tokens 3600 seconds, refresh tokens 30 days. */
export const AUTHORIZATION_CODE_TTL_MS = 60_000;
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600_000;
/**
 * A refresh token presented again within this long of its rotation refreshes once more instead of
 * revoking the grant (RFC 9700 §4.14.2 leaves the reuse policy to the server): a client whose
 * parallel requests all found their access token expired refreshes with the same token at once (the
 * MCP SDK does not serialise them), and all but the first would otherwise revoke the grant the first
 * just renewed. Each such refresh is recorded as one more rotation of the same token. 30 s is Okta's
 * default grace period for rotation.
 */
export const REFRESH_TOKEN_REUSE_GRACE_MS = 30_000;

/** `revoked_by_team`: an owner or admin of the team cut the app off from the dashboard's connected apps. */
export type GrantRevocationReason =
  | 'authorization_code_reused'
  | 'refresh_token_reused'
  | 'revoked_by_client'
  | 'client_deleted'
  | 'revoked_by_team'
  /** The person who authorized the app left the team, or became a member (who cannot authorize apps). */
  | 'user_removed'
  | 'user_demoted';

export interface IssuedToken {
  tokenId: string;
  tokenHash: string;
  expiresAt: string;
}

export type OAuthGrantEvent =
  | {
      type: 'ConsentGiven';
      data: {
        grantId: string;
        clientId: string;
        teamId: string;
        userId: string;
        siteIds: string[];
        scopes: string[];
        /** RFC 8707: the resource the tokens are for (their audience); null when the client named none. */
        resource: string | null;
        givenAt: string;
      };
    }
  | {
      type: 'AuthorizationCodeIssued';
      data: {
        grantId: string;
        clientId: string;
        codeHash: string;
        redirectUri: string;
        /** false when the authorization request named no redirect_uri (the client's one registered URI); absent: it did. */
        redirectUriGiven?: false;
        codeChallenge: string;
        codeChallengeMethod: 'S256';
        expiresAt: string;
        issuedAt: string;
      };
    }
  | { type: 'AuthorizationCodeRedeemed'; data: { grantId: string; clientId: string; redeemedAt: string } }
  | {
      type: 'AccessTokenIssued';
      data: IssuedToken & {
        grantId: string;
        clientId: string;
        teamId: string;
        siteIds: string[];
        scopes: string[];
        resource: string | null;
        issuedAt: string;
      };
    }
  | { type: 'RefreshTokenIssued'; data: IssuedToken & { grantId: string; clientId: string; scopes: string[]; issuedAt: string } }
  | { type: 'RefreshTokenRotated'; data: { grantId: string; tokenId: string; replacedBy: string; rotatedAt: string } }
  | { type: 'TokenRevoked'; data: { grantId: string; tokenId: string; tokenKind: 'access_token'; reason: 'revoked_by_client'; revokedAt: string } }
  | {
      type: 'GrantRevoked';
      data: { grantId: string; clientId: string; teamId: string; reason: GrantRevocationReason; tokenIds: string[]; revokedAt: string };
    };

export type OAuthGrantCommand =
  | {
      type: 'GiveConsent';
      data: {
        grantId: string;
        clientId: string;
        teamId: string;
        userId: string;
        siteIds: string[];
        scopes: string[];
        resource: string | null;
        code: { codeHash: string; redirectUri: string; redirectUriGiven?: false; codeChallenge: string };
        now: string;
      };
    }
  | {
      type: 'RedeemAuthorizationCode';
      data: {
        codeHash: string;
        clientId: string;
        /** null when the token request named none (allowed only when the authorization request named none either). */
        redirectUri: string | null;
        /** S256 of the presented code_verifier, computed by the caller. */
        verifierChallenge: string;
        /** RFC 8707 `resource` of the token request; null when absent. */
        resource: string | null;
        accessToken: Omit<IssuedToken, 'expiresAt'>;
        refreshToken: Omit<IssuedToken, 'expiresAt'>;
        now: string;
      };
    }
  | {
      type: 'RefreshAccessToken';
      data: {
        refreshTokenHash: string;
        clientId: string;
        /** Requested scopes; null keeps the refresh token's scopes. */
        scopes: string[] | null;
        resource: string | null;
        accessToken: Omit<IssuedToken, 'expiresAt'>;
        refreshToken: Omit<IssuedToken, 'expiresAt'>;
        now: string;
      };
    }
  | { type: 'RevokeAccessToken'; data: { tokenId: string; now: string } }
  | { type: 'RevokeGrant'; data: { reason: GrantRevocationReason; now: string } };

interface RefreshTokenState {
  tokenId: string;
  scopes: string[];
  expiresAt: string;
  /**
   * `rotated`: presented and replaced; `retired`: never presented, but a sibling (another token that
   * replaced the same one within the reuse grace) was, so it is spent too. One current token per line.
   */
  status: 'current' | 'rotated' | 'retired';
  /** When it was first rotated (REFRESH_TOKEN_REUSE_GRACE_MS counts from then); null while current. */
  rotatedAt: string | null;
  /** Ids of the tokens that replaced it (more than one when it was presented again within the grace). */
  replacedBy: string[];
}

export type OAuthGrantState =
  | { status: 'none' }
  | {
      status: 'active' | 'revoked';
      grantId: string;
      clientId: string;
      teamId: string;
      /** The person who gave the consent: the app's access lasts only as long as their standing in the team. */
      userId: string;
      siteIds: string[];
      scopes: string[];
      resource: string | null;
      code: { codeHash: string; redirectUri: string; redirectUriGiven: boolean; codeChallenge: string; expiresAt: string; redeemed: boolean } | null;
      /**
       * Every refresh token of the grant by the SHA-256 of its value, rotated ones included (one
       * presented again revokes the grant). Persistent maps: a grant refreshed hourly for a year
       * holds thousands, and copying a plain object per event made the fold quadratic (1,000
       * rotations took 365 ms to fold, 4,000 took 6.6 s, on every refresh).
       */
      refreshTokens: ImmutableMap<RefreshTokenState>;
      /** The hash of each refresh token by its id (`RefreshTokenRotated` names the id). */
      refreshTokenHashes: ImmutableMap<string>;
      /** The id of the refresh token each one replaced. */
      refreshTokenParents: ImmutableMap<string>;
      /** Ids of the access and refresh tokens not revoked or rotated (a set: the values are `true`). */
      liveTokenIds: ImmutableMap<true>;
    };

/** A refusal in OAuth's vocabulary (RFC 6749 §5.2); nothing is appended. */
export class OAuthGrantRuleError extends Error {
  constructor(
    readonly error: 'invalid_grant' | 'invalid_scope' | 'invalid_request' | 'invalid_target' | 'unauthorized_client',
    message: string,
  ) {
    super(message);
  }
}

const invalidGrant = (message: string) => new OAuthGrantRuleError('invalid_grant', message);
const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();
const expired = (expiresAt: string, now: string) => Date.parse(now) >= Date.parse(expiresAt);

/** A rotated token within its grace whose replacements are all unused yet (none of them has started a line of its own). */
function mayPresentAgain(state: ActiveGrant, token: RefreshTokenState, now: string): boolean {
  if (token.status !== 'rotated' || token.rotatedAt === null) return false;
  if (Date.parse(now) - Date.parse(token.rotatedAt) >= REFRESH_TOKEN_REUSE_GRACE_MS) return false;
  return token.replacedBy.every((id) => refreshToken(state, id)?.status === 'current');
}

/** A refresh token of the grant by its id, with its hash (the key it is kept under). */
function refreshToken(state: ActiveGrant, tokenId: string | undefined): { hash: string; state: RefreshTokenState; status: RefreshTokenState['status'] } | null {
  const hash = tokenId === undefined ? undefined : state.refreshTokenHashes.get(tokenId);
  const token = hash === undefined ? undefined : state.refreshTokens.get(hash);
  return hash !== undefined && token ? { hash, state: token, status: token.status } : null;
}

export const oauthGrantDecider: Decider<OAuthGrantState, OAuthGrantCommand, OAuthGrantEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    if (event.type === 'ConsentGiven') {
      const { grantId, clientId, teamId, userId, siteIds, scopes, resource } = event.data;
      return {
        status: 'active',
        grantId,
        clientId,
        teamId,
        userId,
        siteIds,
        scopes,
        resource,
        code: null,
        refreshTokens: ImmutableMap.empty(),
        refreshTokenHashes: ImmutableMap.empty(),
        refreshTokenParents: ImmutableMap.empty(),
        liveTokenIds: ImmutableMap.empty(),
      };
    }
    if (state.status === 'none') return state;
    switch (event.type) {
      case 'AuthorizationCodeIssued': {
        const { codeHash, redirectUri, codeChallenge, expiresAt } = event.data;
        return { ...state, code: { codeHash, redirectUri, redirectUriGiven: event.data.redirectUriGiven ?? true, codeChallenge, expiresAt, redeemed: false } };
      }
      case 'AuthorizationCodeRedeemed':
        return state.code ? { ...state, code: { ...state.code, redeemed: true } } : state;
      case 'AccessTokenIssued':
        return { ...state, liveTokenIds: state.liveTokenIds.set(event.data.tokenId, true) };
      case 'RefreshTokenIssued': {
        const { tokenHash, tokenId, scopes, expiresAt } = event.data;
        return {
          ...state,
          liveTokenIds: state.liveTokenIds.set(tokenId, true),
          refreshTokens: state.refreshTokens.set(tokenHash, { tokenId, scopes, expiresAt, status: 'current', rotatedAt: null, replacedBy: [] }),
          refreshTokenHashes: state.refreshTokenHashes.set(tokenId, tokenHash),
        };
      }
      case 'RefreshTokenRotated': {
        const { tokenId, replacedBy, rotatedAt } = event.data;
        const token = refreshToken(state, tokenId);
        if (!token) return state;
        // A rotation within the reuse grace names a token rotated already: its grace still counts from the first.
        const first = token.status === 'current';
        let refreshTokens = state.refreshTokens.set(token.hash, {
          ...token.state,
          status: first ? 'rotated' : token.state.status,
          rotatedAt: first ? rotatedAt : token.state.rotatedAt,
          replacedBy: [...token.state.replacedBy, replacedBy],
        });
        let liveTokenIds = state.liveTokenIds.delete(tokenId);
        // The first use of one of a token's replacements spends the others: one line of tokens goes on.
        const parent = first ? refreshToken(state, state.refreshTokenParents.get(tokenId)) : null;
        for (const siblingId of parent?.state.replacedBy ?? []) {
          const sibling = siblingId === tokenId ? null : refreshToken(state, siblingId);
          if (sibling?.status !== 'current') continue;
          refreshTokens = refreshTokens.set(sibling.hash, { ...sibling.state, status: 'retired' });
          liveTokenIds = liveTokenIds.delete(siblingId);
        }
        return { ...state, refreshTokens, liveTokenIds, refreshTokenParents: state.refreshTokenParents.set(replacedBy, tokenId) };
      }
      case 'TokenRevoked':
        return { ...state, liveTokenIds: state.liveTokenIds.delete(event.data.tokenId) };
      case 'GrantRevoked':
        return { ...state, status: 'revoked', liveTokenIds: ImmutableMap.empty() };
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'GiveConsent': {
        if (state.status !== 'none') throw new OAuthGrantRuleError('invalid_request', 'grant already exists');
        const { code, now, ...consent } = command.data;
        return [
          { type: 'ConsentGiven', data: { ...consent, givenAt: now } },
          {
            type: 'AuthorizationCodeIssued',
            data: {
              grantId: consent.grantId,
              clientId: consent.clientId,
              ...code,
              codeChallengeMethod: 'S256',
              expiresAt: plus(now, AUTHORIZATION_CODE_TTL_MS),
              issuedAt: now,
            },
          },
        ];
      }
      case 'RedeemAuthorizationCode': {
        const d = command.data;
        if (state.status === 'none' || !state.code || state.code.codeHash !== d.codeHash) throw invalidGrant('The authorization code is invalid.');
        if (state.status === 'revoked') throw invalidGrant('The authorization code is invalid.');
        if (state.clientId !== d.clientId) throw invalidGrant('The authorization code was issued to another client.');
        if (state.code.redeemed) return [revokeGrant(state, 'authorization_code_reused', d.now)];
        if (expired(state.code.expiresAt, d.now)) throw invalidGrant('The authorization code has expired.');
        // RFC 6749 §4.1.3: required when the authorization request named one, and then identical.
        if (d.redirectUri === null ? state.code.redirectUriGiven : state.code.redirectUri !== d.redirectUri) {
          throw invalidGrant(d.redirectUri === null ? 'redirect_uri is required: the authorization request named one.' : 'redirect_uri does not match the authorization request.');
        }
        if (state.code.codeChallenge !== d.verifierChallenge) throw invalidGrant('code_verifier does not match the code_challenge.');
        checkResource(state, d.resource);
        return [
          { type: 'AuthorizationCodeRedeemed', data: { grantId: state.grantId, clientId: state.clientId, redeemedAt: d.now } },
          ...issueTokens(state, state.scopes, state.scopes, d.accessToken, d.refreshToken, d.now),
        ];
      }
      case 'RefreshAccessToken': {
        const d = command.data;
        const presented = state.status === 'none' ? undefined : state.refreshTokens.get(d.refreshTokenHash);
        if (state.status === 'none' || !presented) throw invalidGrant('The refresh token is invalid.');
        if (state.status === 'revoked') throw invalidGrant('The refresh token has been revoked.');
        if (state.clientId !== d.clientId) throw invalidGrant('The refresh token was issued to another client.');
        if (presented.status !== 'current' && !mayPresentAgain(state, presented, d.now)) return [revokeGrant(state, 'refresh_token_reused', d.now)];
        if (expired(presented.expiresAt, d.now)) throw invalidGrant('The refresh token has expired.');
        const scopes = d.scopes ?? presented.scopes;
        const widened = scopes.filter((s) => !presented.scopes.includes(s));
        if (widened.length > 0) throw new OAuthGrantRuleError('invalid_scope', `The grant does not include ${widened.join(' ')}.`);
        checkResource(state, d.resource);
        return [
          { type: 'RefreshTokenRotated', data: { grantId: state.grantId, tokenId: presented.tokenId, replacedBy: d.refreshToken.tokenId, rotatedAt: d.now } },
          ...issueTokens(state, scopes, presented.scopes, d.accessToken, d.refreshToken, d.now),
        ];
      }
      case 'RevokeAccessToken': {
        if (state.status !== 'active' || !state.liveTokenIds.has(command.data.tokenId)) return [];
        return [
          {
            type: 'TokenRevoked',
            data: { grantId: state.grantId, tokenId: command.data.tokenId, tokenKind: 'access_token', reason: 'revoked_by_client', revokedAt: command.data.now },
          },
        ];
      }
      case 'RevokeGrant':
        if (state.status !== 'active') return [];
        return [revokeGrant(state, command.data.reason, command.data.now)];
      default:
        return assertNever(command);
    }
  },
};

type ActiveGrant = Extract<OAuthGrantState, { grantId: string }>;

/** RFC 8707 §2.2: a token request may name the grant's resource again, never another one. */
function checkResource(state: ActiveGrant, requested: string | null) {
  if (requested !== null && requested !== state.resource) {
    throw new OAuthGrantRuleError('invalid_target', state.resource ? `This grant is for ${state.resource} only.` : 'This grant names no resource.');
  }
}

function revokeGrant(state: ActiveGrant, reason: GrantRevocationReason, now: string): OAuthGrantEvent {
  return {
    type: 'GrantRevoked',
    data: { grantId: state.grantId, clientId: state.clientId, teamId: state.teamId, reason, tokenIds: [...state.liveTokenIds.keys()], revokedAt: now },
  };
}

function issueTokens(
  state: ActiveGrant,
  accessScopes: string[],
  refreshScopes: string[],
  access: Omit<IssuedToken, 'expiresAt'>,
  refresh: Omit<IssuedToken, 'expiresAt'>,
  now: string,
): OAuthGrantEvent[] {
  const base = { grantId: state.grantId, clientId: state.clientId, issuedAt: now };
  return [
    {
      type: 'AccessTokenIssued',
      data: {
        ...base,
        ...access,
        teamId: state.teamId,
        siteIds: state.siteIds,
        scopes: accessScopes,
        resource: state.resource,
        expiresAt: plus(now, ACCESS_TOKEN_TTL_SECONDS * 1000),
      },
    },
    { type: 'RefreshTokenIssued', data: { ...base, ...refresh, scopes: refreshScopes, expiresAt: plus(now, REFRESH_TOKEN_TTL_MS) } },
  ];
}
