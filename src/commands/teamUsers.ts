import { normaliseEmail } from '../domain/email.ts';
import { type AuthorizerGone, type Role, type TeamCommand, canAuthorizeApps, teamDecider, teamStream } from '../domain/team.ts';
import { userEmailDecider, userEmailStream } from '../domain/userEmail.ts';
import type { CommandContext } from './context.ts';
import { hashPassword, passwordStamp, sha256Hex } from './credentials.ts';
import { endDashboardSession } from './dashboardSessions.ts';
import { aggregateStreamFolding } from './aggregateStream.ts';
import { handleCommand } from './handleCommand.ts';
import { type SubscriptionDeletionCause, deleteSubscription } from './webhookSubscriptions.ts';
import { ServiceError } from '../domain/errors.ts';
import { oauthGrantDecider, oauthGrantStream } from '../domain/oauthGrant.ts';
import { revokeGrant } from './oauth.ts';
import { TenancyError, checkPassword, decideOnTeam, requireTeam } from './tenancy.ts';
import { toDomainEvent } from '../lib/parseEvent.ts';
import { latestPosition } from '../lib/latestPosition.ts';

/**
 * What a user holds beyond the team's stream, as the caller found it in the read models: the
 * dashboard sessions still open, the app connections (OAuth grants) the user authorized, and the
 * webhook subscriptions made with those connections' tokens.
 */
export interface UserHoldings {
  sessionIds: readonly string[];
  grantIds: readonly string[];
  subscriptions: readonly { id: string; siteId: string }[];
}

/**
 * Takes a user out of the team: their sessions end, the apps they connected are disconnected (an app
 * a departed admin connected would otherwise keep the team's data flowing to them), and their email
 * address is free to be added again. The team's last owner cannot be removed.
 */
export async function removeUser(ctx: CommandContext, input: { teamId: string; userId: string; byOwner?: string }, holdings: UserHoldings) {
  const result = await onTeam(ctx, input.teamId, { type: 'RemoveUser', data: { ...input, now: ctx.clock.now().toISOString() } });
  const removed = result.events.find((e) => e.type === 'UserRemoved');
  const email = removed?.type === 'UserRemoved' ? removed.data.email : null;
  return { position: latestPosition(result.position, await sweepRemovedUser(ctx, { teamId: input.teamId, userId: input.userId, email }, holdings)) };
}

/**
 * What a removal does beyond the team's stream: the address is freed, the sessions end, the apps
 * disconnect. Run again for a user removed already, it finishes a sweep cut short, or one that missed
 * a consent given meanwhile (each step changes nothing the second time).
 */
export async function sweepRemovedUser(ctx: CommandContext, user: { teamId: string; userId: string; email: string | null }, holdings: UserHoldings): Promise<bigint | null> {
  if (user.email !== null) {
    // Only the user's own claim is released: an address claimed since by someone else stays theirs.
    await handleCommand(ctx, userEmailStream(sha256Hex(normaliseEmail(user.email))), userEmailDecider, {
      type: 'ReleaseUserEmail',
      data: { email: user.email, userId: user.userId, reason: 'user removed from the team', now: ctx.clock.now().toISOString() },
    });
  }
  const ended = await endSessions(ctx, holdings.sessionIds);
  return latestPosition(ended, await disconnectApps(ctx, user, holdings, 'user_removed'));
}

/** The user named by id or email among those removed from the team (its stream), if any. */
export async function removedUserOf(ctx: Pick<CommandContext, 'events'>, teamId: string, idOrEmail: string): Promise<{ userId: string; email: string } | null> {
  const removed = (await ctx.events.readStream(teamStream(teamId))).map(toDomainEvent).flatMap((e) => (e?.type === 'UserRemoved' ? [{ userId: e.data.userId, email: e.data.email }] : []));
  return removed.findLast((u) => u.userId === idOrEmail || u.email === normaliseEmail(idOrEmail)) ?? null;
}

/**
 * Changes a user's role. A user made `member` cannot authorize apps, so the apps they connected are
 * disconnected. The team's last owner keeps the role.
 */
export async function changeUserRole(ctx: CommandContext, input: { teamId: string; userId: string; role: Role; byOwner?: string }, holdings: Pick<UserHoldings, 'grantIds' | 'subscriptions'>) {
  const result = await onTeam(ctx, input.teamId, { type: 'ChangeUserRole', data: { ...input, now: ctx.clock.now().toISOString() } });
  const changed = result.events.length > 0;
  // Also when the role was member already: a sweep cut short before is finished.
  const disconnected = !canAuthorizeApps(input.role) ? await disconnectApps(ctx, input, holdings, 'user_demoted') : null;
  return { changed, position: latestPosition(result.position, disconnected) };
}

/**
 * Sets a user's dashboard password (null: no dashboard sign-in) and ends every session they had;
 * `credential` is the stamp of a session signed in with the new password (`sessionEpoch`: the user's, as the caller read them).
 */
export async function changeUserPassword(
  ctx: CommandContext,
  input: { teamId: string; userId: string; password: string | null; sessionEpoch?: number },
  holdings: Pick<UserHoldings, 'sessionIds'>,
) {
  // Null takes the sign-in away; an empty one is a mistake (a form sent blank), not a wish to.
  if (input.password === '') throw new TenancyError('give a password (or take the sign-in away on purpose)');
  checkPassword(input.password ?? undefined);
  const passwordHash = input.password === null ? null : await hashPassword(input.password);
  const result = await onTeam(ctx, input.teamId, {
    type: 'ChangeUserPassword',
    data: { teamId: input.teamId, userId: input.userId, passwordHash, now: ctx.clock.now().toISOString() },
  });
  return { position: latestPosition(result.position, await endSessions(ctx, holdings.sessionIds)), credential: passwordStamp(passwordHash, input.sessionEpoch) };
}

/**
 * Signs the user out of every browser (a lost laptop, a stolen cookie): recorded on the team's stream,
 * it ends every session started before it, those the read models did not list yet too; the listed
 * ones also get their DashboardSessionEnded.
 */
export async function signOutEverywhere(ctx: CommandContext, input: { teamId: string; userId: string }, holdings: Pick<UserHoldings, 'sessionIds'>): Promise<bigint | null> {
  const result = await onTeam(ctx, input.teamId, { type: 'SignOutEverywhere', data: { ...input, now: ctx.clock.now().toISOString() } });
  return latestPosition(result.position, await endSessions(ctx, holdings.sessionIds));
}

/** Ends each of these dashboard sessions ("sign out everywhere", a stolen cookie); the last position written, if any. */
export async function endSessions(ctx: CommandContext, sessionIds: readonly string[]): Promise<bigint | null> {
  let position: bigint | null = null;
  for (const sessionId of sessionIds) position = latestPosition(position, (await endDashboardSession(ctx, { sessionId })).position);
  return position;
}

/**
 * Revokes the grants the user gave in the team, then deletes the webhook subscriptions made with
 * them. Each grant is checked against its own stream: a wrong list from a caller cannot reach
 * another user's or another team's apps. (A grant missed here, such as a consent given meanwhile, is
 * refused at its next use, revoked then with its subscriptions: revokeIfAuthorizerGone and the token
 * endpoint or the bearer resolver.)
 */
async function disconnectApps(
  ctx: CommandContext,
  user: { teamId: string; userId: string },
  holdings: Pick<UserHoldings, 'grantIds' | 'subscriptions'>,
  reason: AuthorizerGone,
): Promise<bigint | null> {
  let position: bigint | null = null;
  for (const grantId of holdings.grantIds) {
    const { state } = await aggregateStreamFolding(ctx.events, oauthGrantStream(grantId), oauthGrantDecider);
    if (state.status !== 'active' || state.teamId !== user.teamId || state.userId !== user.userId) continue;
    position = latestPosition(position, (await revokeGrant(ctx, grantId, reason)).position);
  }
  return latestPosition(position, await deleteAppSubscriptions(ctx, holdings.subscriptions, { reason, userId: user.userId }));
}

/** Deletes these subscriptions of disconnected apps; one deleted meanwhile by someone else is passed over. */
export async function deleteAppSubscriptions(
  ctx: CommandContext,
  subscriptions: readonly { id: string; siteId: string }[],
  cause: SubscriptionDeletionCause,
): Promise<bigint | null> {
  let position: bigint | null = null;
  for (const s of subscriptions) {
    try {
      position = latestPosition(position, (await deleteSubscription(ctx, { siteId: s.siteId, subscriptionId: s.id }, cause)).position);
    } catch (error) {
      if (!(error instanceof ServiceError && error.code === 'NOT_FOUND')) throw error;
    }
  }
  return position;
}

async function onTeam(ctx: CommandContext, teamId: string, command: TeamCommand) {
  await requireTeam(ctx, teamId);
  return decideOnTeam(ctx, teamId, command);
}

