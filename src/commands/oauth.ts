import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  type ActiveOAuthClient,
  type TokenEndpointAuthMethod,
  OAuthClientRuleError,
  oauthClientDecider,
  oauthClientStream,
  redirectUriProblem,
} from '../domain/oauthClient.ts';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  type GrantRevocationReason,
  type OAuthGrantCommand,
  type OAuthGrantEvent,
  OAuthGrantRuleError,
  oauthGrantDecider,
  oauthGrantStream,
} from '../domain/oauthGrant.ts';
import { aggregateStream, aggregateStreamCached, aggregateStreamFolding } from './aggregateStream.ts';
import { type AuthorizerGone, appAuthorizerGone, teamDecider, teamStream } from '../domain/team.ts';
import type { CommandContext } from './context.ts';
import { sha256Hex } from './credentials.ts';
import { handleCommand } from './handleCommand.ts';
import { deleteSubscription } from './webhookSubscriptions.ts';
import { ServiceError } from '../domain/errors.ts';
import { DISPLAY_NAME_MESSAGE, isDisplayName } from '../domain/text.ts';
import { latestPosition } from '../lib/latestPosition.ts';

/** Decides on a grant's stream. It gains three events per refresh, so its fold is kept and carried on (aggregateStreamFolding). */
const onGrant = (ctx: CommandContext, grantId: string, command: OAuthGrantCommand) =>
  handleCommand(ctx, oauthGrantStream(grantId), oauthGrantDecider, command, {}, { aggregate: aggregateStreamFolding });

/** `svc_` + 24 hex characters: never the shape of an API key (`svc_` + 64 hex). */
export const generateClientId = () => `svc_${randomBytes(12).toString('hex')}`;
export const generateClientSecret = () => `svc_ocsec_${randomBytes(32).toString('base64url')}`;
export const generateAccessToken = () => `svc_oauth_${randomBytes(32).toString('base64url')}`;
/** Codes and refresh tokens name their grant so the token endpoint reads the grant's stream directly. */
const generateAuthorizationCode = (grantId: string) => `${grantId}.${randomBytes(32).toString('base64url')}`;
const generateRefreshToken = (grantId: string) => `svc_ort_${grantId}.${randomBytes(32).toString('base64url')}`;

export const CLIENT_ID_SHAPE = /^svc_[0-9a-f]{24}$/;
export const ACCESS_TOKEN_SHAPE = /^svc_oauth_[A-Za-z0-9_-]{43}$/;
const CODE_SHAPE = /^([0-9A-HJKMNP-TV-Z]{26})\.[A-Za-z0-9_-]{43}$/;
const REFRESH_TOKEN_SHAPE = /^svc_ort_([0-9A-HJKMNP-TV-Z]{26})\.[A-Za-z0-9_-]{43}$/;

/** PKCE S256 (RFC 7636 §4.2): BASE64URL(SHA256(ASCII(code_verifier))). */
export const pkceS256 = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');

export const constantTimeEqual = (a: string, b: string) => {
  const x = Buffer.from(sha256Hex(a));
  const y = Buffer.from(sha256Hex(b));
  return timingSafeEqual(x, y) && a.length === b.length;
};

/** The client as its own stream says now (no read-model lag): used by every security decision. */
export async function loadOAuthClient(ctx: CommandContext, clientId: string): Promise<ActiveOAuthClient | null> {
  if (!CLIENT_ID_SHAPE.test(clientId)) return null;
  const { state } = await aggregateStream(ctx.events, oauthClientStream(clientId), oauthClientDecider);
  return state.status === 'active' ? state : null;
}

/** Checks a presented client secret against the stored SHA-256, in constant time. */
export function clientSecretMatches(client: { secretHash: string | null }, secret: string): boolean {
  if (!client.secretHash) return false;
  return timingSafeEqual(Buffer.from(sha256Hex(secret)), Buffer.from(client.secretHash));
}

export class OAuthClientInputError extends Error {}

export async function registerOAuthClient(
  ctx: CommandContext,
  input: { teamId: string; userId: string; name: string; redirectUris: string[]; tokenEndpointAuthMethod: TokenEndpointAuthMethod },
) {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 120) throw new OAuthClientInputError('The name must be 1 to 120 characters.');
  if (!isDisplayName(name)) throw new OAuthClientInputError(`The name ${DISPLAY_NAME_MESSAGE}.`);
  const redirectUris = [...new Set(input.redirectUris.map((u) => u.trim()).filter(Boolean))];
  if (redirectUris.length === 0) throw new OAuthClientInputError('Give at least one redirect URI.');
  if (redirectUris.length > 10) throw new OAuthClientInputError('Give at most 10 redirect URIs.');
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthClientInputError(problem);
  }
  const clientId = generateClientId();
  const clientSecret = input.tokenEndpointAuthMethod === 'none' ? null : generateClientSecret();
  const { position } = await handleCommand(ctx, oauthClientStream(clientId), oauthClientDecider, {
    type: 'RegisterOAuthClient',
    data: {
      clientId,
      teamId: input.teamId,
      name,
      redirectUris,
      tokenEndpointAuthMethod: input.tokenEndpointAuthMethod,
      secretHash: clientSecret ? sha256Hex(clientSecret) : null,
      userId: input.userId,
      now: ctx.clock.now().toISOString(),
    },
  });
  return { clientId, clientSecret, position };
}

/**
 * RFC 7591 dynamic registration: a public client (PKCE only) that belongs to no team until a team's
 * owner or admin approves it. The caller decides whether registration is open and rate-limits it.
 */
export async function registerOAuthClientDynamically(ctx: CommandContext, input: { name: string; redirectUris: string[]; clientUri: string | null }) {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 120) throw new OAuthClientInputError('client_name must be 1 to 120 characters.');
  if (!isDisplayName(name)) throw new OAuthClientInputError(`client_name ${DISPLAY_NAME_MESSAGE}.`);
  const redirectUris = [...new Set(input.redirectUris.map((u) => u.trim()).filter(Boolean))];
  if (redirectUris.length === 0) throw new OAuthClientInputError('redirect_uris must name at least one redirect URI.');
  if (redirectUris.length > 10) throw new OAuthClientInputError('redirect_uris may name at most 10 redirect URIs.');
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthClientInputError(problem);
  }
  const clientId = generateClientId();
  const now = ctx.clock.now().toISOString();
  const { position } = await handleCommand(ctx, oauthClientStream(clientId), oauthClientDecider, {
    type: 'RegisterOAuthClientDynamically',
    data: { clientId, name, redirectUris, clientUri: input.clientUri, now },
  });
  return { clientId, name, redirectUris, issuedAt: now, position };
}

async function requireTeamClient(ctx: CommandContext, clientId: string, teamId: string) {
  const client = await loadOAuthClient(ctx, clientId);
  if (!client || client.teamId !== teamId) throw new OAuthClientRuleError('not_found');
  return client;
}

/** The old secret stops working at once; tokens already issued are untouched. */
export async function rotateOAuthClientSecret(ctx: CommandContext, input: { clientId: string; teamId: string; userId: string }) {
  await requireTeamClient(ctx, input.clientId, input.teamId);
  const clientSecret = generateClientSecret();
  const { position } = await handleCommand(ctx, oauthClientStream(input.clientId), oauthClientDecider, {
    type: 'RotateOAuthClientSecret',
    data: { clientId: input.clientId, secretHash: sha256Hex(clientSecret), userId: input.userId, now: ctx.clock.now().toISOString() },
  });
  return { clientSecret, position };
}

/**
 * Deletes the client: its tokens stop working at once. Its grants and the webhook subscriptions it
 * created are then swept by `sweepDeletedOAuthClient`, with what the read models list once they
 * include this deletion (see http/dashboard/oauthClientDeletion.ts).
 */
export async function deleteOAuthClient(ctx: CommandContext, input: { clientId: string; teamId: string; userId: string }) {
  await requireTeamClient(ctx, input.clientId, input.teamId);
  const { position } = await handleCommand(ctx, oauthClientStream(input.clientId), oauthClientDecider, {
    type: 'DeleteOAuthClient',
    data: { clientId: input.clientId, userId: input.userId, now: ctx.clock.now().toISOString() },
  });
  return { position };
}

/** What a deleted client leaves behind, as the caller found it in the read models. */
export interface DeletedClientLeftovers {
  grantIds: readonly string[];
  subscriptions: readonly { id: string; siteId: string }[];
}

/** Revokes a deleted client's grants (so every token) and deletes the subscriptions it created. */
export async function sweepDeletedOAuthClient(ctx: CommandContext, clientId: string, leftovers: DeletedClientLeftovers): Promise<{ position: bigint | null }> {
  let position: bigint | null = null;
  for (const grantId of leftovers.grantIds) {
    const r = await revokeGrant(ctx, grantId, 'client_deleted');
    position = latestPosition(position, r.position);
  }
  for (const s of leftovers.subscriptions) {
    try {
      const r = await deleteSubscription(ctx, { siteId: s.siteId, subscriptionId: s.id }, { reason: 'client_deleted', clientId });
      position = latestPosition(position, r.position);
    } catch (error) {
      // Already deleted by someone else; anything else fails the sweep (the webhook worker finishes it: departedApps.ts).
      if (!(error instanceof ServiceError && error.code === 'NOT_FOUND')) throw error;
    }
  }
  return { position };
}

/**
 * The other half of the deletion race: a subscription created with a token of a client deleted
 * meanwhile is deleted again at once. Returns true when it was undone.
 */
export async function undoIfClientDeleted(ctx: CommandContext, subscription: { id: string; siteId: string; clientId: string }) {
  const history = await ctx.events.readStream(oauthClientStream(subscription.clientId));
  if (!history.some((e) => e.type === 'OAuthClientDeleted')) return false;
  await deleteSubscription(ctx, { siteId: subscription.siteId, subscriptionId: subscription.id }, { reason: 'client_deleted', clientId: subscription.clientId });
  return true;
}

export async function revokeGrant(ctx: CommandContext, grantId: string, reason: GrantRevocationReason) {
  return onGrant(ctx, grantId, {
    type: 'RevokeGrant',
    data: { reason, now: ctx.clock.now().toISOString() },
  });
}

/** Records the consent and issues a 60-second authorization code bound to client, redirect URI and PKCE challenge. */
export async function giveConsent(
  ctx: CommandContext,
  input: {
    clientId: string;
    teamId: string;
    userId: string;
    siteIds: string[];
    scopes: string[];
    resource: string | null;
    redirectUri: string;
    /** false when the authorization request named no redirect_uri (the client's one registered URI was used). */
    redirectUriGiven?: boolean;
    codeChallenge: string;
  },
) {
  const grantId = ctx.newId();
  const code = generateAuthorizationCode(grantId);
  const { position } = await onGrant(ctx, grantId, {
    type: 'GiveConsent',
    data: {
      grantId,
      clientId: input.clientId,
      teamId: input.teamId,
      userId: input.userId,
      siteIds: [...new Set(input.siteIds)],
      scopes: [...new Set(input.scopes)],
      resource: input.resource,
      code: { codeHash: sha256Hex(code), redirectUri: input.redirectUri, ...(input.redirectUriGiven === false ? { redirectUriGiven: false as const } : {}), codeChallenge: input.codeChallenge },
      now: ctx.clock.now().toISOString(),
    },
  });
  return { grantId, code, position };
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

function newTokens(ctx: CommandContext, grantId: string) {
  const accessToken = generateAccessToken();
  const refreshToken = generateRefreshToken(grantId);
  return {
    accessToken,
    refreshToken,
    access: { tokenId: ctx.newId(), tokenHash: sha256Hex(accessToken) },
    refresh: { tokenId: ctx.newId(), tokenHash: sha256Hex(refreshToken) },
  };
}

function tokenResponse(events: OAuthGrantEvent[], accessToken: string, refreshToken: string): TokenResponse {
  const issued = events.find((e) => e.type === 'AccessTokenIssued');
  const scopes = issued && issued.type === 'AccessTokenIssued' ? issued.data.scopes : [];
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_SECONDS, refresh_token: refreshToken, scope: scopes.join(' ') };
}

/**
 * An app's access lasts only as long as its authorizer's standing: when the person who gave the consent
 * has left the team or become a member, the grant is revoked now (whatever the removal's own sweep
 * missed: a consent given meanwhile, a sweep cut short). Decided on the grant's and the team's streams,
 * not on a read model that may lag. Null when the grant stands, was revoked already (by this call's
 * competitor too: only one of them answers), or is `clientId`'s other than the one asking.
 */
export async function revokeIfAuthorizerGone(ctx: CommandContext, grantId: string, clientId?: string): Promise<{ teamId: string; reason: AuthorizerGone; position: bigint | null } | null> {
  const { state: grant } = await aggregateStreamFolding(ctx.events, oauthGrantStream(grantId), oauthGrantDecider);
  // No grant, one revoked, or another client's: the decider refuses it in its own words (and nobody else learns or changes anything here).
  if (grant.status !== 'active' || (clientId !== undefined && grant.clientId !== clientId)) return null;
  const { state: team } = await aggregateStreamCached(ctx.events, teamStream(grant.teamId), teamDecider);
  const reason = appAuthorizerGone(team, grant.userId);
  if (!reason) return null;
  const revoked = await revokeGrant(ctx, grantId, reason);
  return revoked.events.length > 0 ? { teamId: grant.teamId, reason, position: revoked.position } : null;
}

/** The token endpoint's refusal of a grant whose authorizer is gone; the route deletes the grant's subscriptions before answering. */
export class AuthorizerGoneError extends OAuthGrantRuleError {
  constructor(
    readonly grantId: string,
    readonly teamId: string,
    readonly reason: AuthorizerGone,
    /** Where the revocation was written. */
    readonly position: bigint | null,
  ) {
    super(
      'invalid_grant',
      reason === 'user_removed'
        ? 'The person who authorized this app is no longer in the team; the app must be authorized again.'
        : 'The person who authorized this app can no longer authorize apps; the app must be authorized again.',
    );
  }
}

async function requireAuthorizerInForce(ctx: CommandContext, grantId: string, clientId: string): Promise<void> {
  const gone = await revokeIfAuthorizerGone(ctx, grantId, clientId);
  if (gone) throw new AuthorizerGoneError(grantId, gone.teamId, gone.reason, gone.position);
}

/** Single use: a second redemption revokes the whole grant (RFC 9700 §4.10.1) and is refused. */
export async function redeemAuthorizationCode(
  ctx: CommandContext,
  input: { code: string; clientId: string; redirectUri: string | null; codeVerifier: string; resource: string | null },
): Promise<{ response: TokenResponse; position: bigint | null }> {
  const match = CODE_SHAPE.exec(input.code);
  if (!match) throw new OAuthGrantRuleError('invalid_grant', 'The authorization code is invalid.');
  const grantId = match[1]!;
  await requireAuthorizerInForce(ctx, grantId, input.clientId);
  const t = newTokens(ctx, grantId);
  const { events, position } = await onGrant(ctx, grantId, {
    type: 'RedeemAuthorizationCode',
    data: {
      codeHash: sha256Hex(input.code),
      clientId: input.clientId,
      redirectUri: input.redirectUri,
      verifierChallenge: pkceS256(input.codeVerifier),
      resource: input.resource,
      accessToken: t.access,
      refreshToken: t.refresh,
      now: ctx.clock.now().toISOString(),
    },
  });
  if (events.some((e) => e.type === 'GrantRevoked')) {
    throw new OAuthGrantRuleError('invalid_grant', 'The authorization code was already used; every token issued from it is revoked.');
  }
  return { response: tokenResponse(events, t.accessToken, t.refreshToken), position };
}

/** Rotates the refresh token; presenting a rotated one revokes the whole grant, past REFRESH_TOKEN_REUSE_GRACE_MS of its rotation. */
export async function refreshAccessToken(
  ctx: CommandContext,
  input: { refreshToken: string; clientId: string; scopes: string[] | null; resource: string | null },
): Promise<{ response: TokenResponse; position: bigint | null }> {
  const match = REFRESH_TOKEN_SHAPE.exec(input.refreshToken);
  if (!match) throw new OAuthGrantRuleError('invalid_grant', 'The refresh token is invalid.');
  const grantId = match[1]!;
  await requireAuthorizerInForce(ctx, grantId, input.clientId);
  const t = newTokens(ctx, grantId);
  const { events, position } = await onGrant(ctx, grantId, {
    type: 'RefreshAccessToken',
    data: {
      refreshTokenHash: sha256Hex(input.refreshToken),
      clientId: input.clientId,
      scopes: input.scopes,
      resource: input.resource,
      accessToken: t.access,
      refreshToken: t.refresh,
      now: ctx.clock.now().toISOString(),
    },
  });
  if (events.some((e) => e.type === 'GrantRevoked')) {
    throw new OAuthGrantRuleError('invalid_grant', 'The refresh token was already used; the grant is revoked.');
  }
  return { response: tokenResponse(events, t.accessToken, t.refreshToken), position };
}

/** What the caller found stored under a presented token's SHA-256 (access tokens name no stream). */
export interface StoredToken {
  kind: 'access_token' | 'refresh_token';
  tokenId: string;
  grantId: string;
  clientId: string;
}

/**
 * RFC 7009: revokes a token the client holds. A refresh token takes its whole grant with it (§2.1);
 * an access token only itself. Unknown tokens and tokens of other clients are ignored. A refresh
 * token is checked against its grant's stream; an access token against `stored`, which the caller
 * loads for tokens of ACCESS_TOKEN_SHAPE.
 */
export async function revokeToken(
  ctx: CommandContext,
  input: { token: string; clientId: string; stored: StoredToken | null },
): Promise<{ position: bigint | null }> {
  // RFC 7009 §2.1: a token issued to another client is refused, not silently left alone (a 200 means revoked).
  const notThisClients = () => new OAuthGrantRuleError('unauthorized_client', 'The token was not issued to this client.');
  const refresh = REFRESH_TOKEN_SHAPE.exec(input.token);
  if (refresh) {
    const grantId = refresh[1]!;
    const { state } = await aggregateStreamFolding(ctx.events, oauthGrantStream(grantId), oauthGrantDecider);
    if (state.status !== 'active' || !state.refreshTokens.has(sha256Hex(input.token))) return { position: null };
    if (state.clientId !== input.clientId) throw notThisClients();
    return revokeGrant(ctx, grantId, 'revoked_by_client');
  }
  if (ACCESS_TOKEN_SHAPE.test(input.token)) {
    const doc = input.stored;
    if (!doc || doc.kind !== 'access_token') return { position: null };
    if (doc.clientId !== input.clientId) throw notThisClients();
    return handleCommand(ctx, oauthGrantStream(doc.grantId), oauthGrantDecider, {
      type: 'RevokeAccessToken',
      data: { tokenId: doc.tokenId, now: ctx.clock.now().toISOString() },
    });
  }
  return { position: null };
}
