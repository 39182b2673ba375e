import { normaliseEmail } from '../domain/email.ts';
import { type Role, TeamRuleError, type TeamCommand, teamDecider, teamStream } from '../domain/team.ts';
import { userEmailDecider, userEmailStream } from '../domain/userEmail.ts';
import type { CommandContext } from './context.ts';
import { hashPassword, sha256Hex } from './credentials.ts';
import { endDashboardSession } from './dashboardSessions.ts';
import { handleCommand } from './handleCommand.ts';
import { revokeGrant } from './oauth.ts';
import { TenancyError, checkPassword, requireTeam } from './tenancy.ts';

/**
 * What a user holds beyond the team's stream, as the caller found it in the read models: the
 * dashboard sessions still open and the app connections (OAuth grants) the user authorized.
 */
export interface UserHoldings {
  sessionIds: readonly string[];
  grantIds: readonly string[];
}

/**
 * Takes a user out of the team: their sessions end, the apps they connected are disconnected (an app
 * a departed admin connected would otherwise keep the team's data flowing to them), and their email
 * address is free to be added again. The team's last owner cannot be removed.
 */
export async function removeUser(ctx: CommandContext, input: { teamId: string; userId: string }, holdings: UserHoldings) {
  const result = await onTeam(ctx, input.teamId, { type: 'RemoveUser', data: { ...input, now: ctx.clock.now().toISOString() } });
  const removed = result.events.find((e) => e.type === 'UserRemoved');
  if (removed?.type === 'UserRemoved') {
    await handleCommand(ctx, userEmailStream(sha256Hex(normaliseEmail(removed.data.email))), userEmailDecider, {
      type: 'ReleaseUserEmail',
      data: { email: removed.data.email, userId: input.userId, reason: 'user removed from the team', now: ctx.clock.now().toISOString() },
    });
  }
  return { position: later(result.position, await endSessions(ctx, holdings.sessionIds), await disconnectApps(ctx, holdings.grantIds, 'user_removed')) };
}

/**
 * Changes a user's role; it applies to their next request. A user made `member` cannot authorize apps,
 * so the apps they connected are disconnected. The team's last owner keeps the role.
 */
export async function changeUserRole(ctx: CommandContext, input: { teamId: string; userId: string; role: Role }, holdings: Pick<UserHoldings, 'grantIds'>) {
  const result = await onTeam(ctx, input.teamId, { type: 'ChangeUserRole', data: { ...input, now: ctx.clock.now().toISOString() } });
  const changed = result.events.length > 0;
  const disconnected = changed && input.role === 'member' ? await disconnectApps(ctx, holdings.grantIds, 'user_demoted') : null;
  return { changed, position: later(result.position, disconnected) };
}

/** Sets a user's dashboard password (none: no dashboard sign-in) and ends every session they had. */
export async function changeUserPassword(ctx: CommandContext, input: { teamId: string; userId: string; password: string | undefined }, holdings: Pick<UserHoldings, 'sessionIds'>) {
  checkPassword(input.password);
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  const result = await onTeam(ctx, input.teamId, {
    type: 'ChangeUserPassword',
    data: { teamId: input.teamId, userId: input.userId, passwordHash, now: ctx.clock.now().toISOString() },
  });
  return { position: later(result.position, await endSessions(ctx, holdings.sessionIds)) };
}

/** Ends each of these dashboard sessions ("sign out everywhere", a stolen cookie); the last position written, if any. */
export async function endSessions(ctx: CommandContext, sessionIds: readonly string[]): Promise<bigint | null> {
  let position: bigint | null = null;
  for (const sessionId of sessionIds) position = later(position, (await endDashboardSession(ctx, { sessionId })).position);
  return position;
}

async function disconnectApps(ctx: CommandContext, grantIds: readonly string[], reason: 'user_removed' | 'user_demoted'): Promise<bigint | null> {
  let position: bigint | null = null;
  for (const grantId of grantIds) position = later(position, (await revokeGrant(ctx, grantId, reason)).position);
  return position;
}

async function onTeam(ctx: CommandContext, teamId: string, command: TeamCommand) {
  await requireTeam(ctx, teamId);
  try {
    return await handleCommand(ctx, teamStream(teamId), teamDecider, command);
  } catch (error) {
    if (error instanceof TeamRuleError) throw new TenancyError(error.message);
    throw error;
  }
}

const later = (...positions: (bigint | null | undefined)[]): bigint | null =>
  positions.reduce<bigint | null>((a, b) => (b != null && (a === null || b > a) ? b : a), null);
