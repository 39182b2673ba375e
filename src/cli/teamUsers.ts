import type { Command } from 'commander';
import { normaliseEmail } from '../domain/email.ts';
import { ROLES } from '../domain/team.ts';
import { TenancyError, checkPassword, requireTeam } from '../commands/tenancy.ts';
import { changeUserPassword, changeUserRole, removeUser, removedUserOf, signOutEverywhere, sweepRemovedUser } from '../commands/teamUsers.ts';
import { appsIfMember, holdingsOfUser } from '../readModels/userHoldings.ts';
import { openSessionsOfUser } from '../readModels/dashboardSessions.ts';
import { type UserDoc, findUserByEmail, getUser, listUsersOfTeam } from '../readModels/users.ts';
import type { Services } from '../services.ts';
import { choiceOption, print } from './output.ts';
import { passwordFrom } from './passwordFromEnv.ts';

type WithServices = <T>(fn: (services: Services) => Promise<T>) => Promise<T>;

/** `outreach team users | remove-user | set-role | set-password | end-sessions`: a team's people, for the operator. */
export function registerTeamUserCommands(team: Command, json: () => boolean, withServices: WithServices): void {
  team
    .command('users')
    .description("list the team's users")
    .requiredOption('--team <teamId>', 'the team')
    .action(async (opts) =>
      withServices(async (s) => {
        await requireTeam(s, opts.team);
        await s.projections.catchUp();
        const users = (await listUsersOfTeam(s.readModels, opts.team)).map((u) => ({
          userId: u.id,
          email: u.email,
          role: u.role,
          dashboardSignIn: u.passwordHash !== null,
          addedAt: u.createdAt,
        }));
        print(json(), { teamId: opts.team, users }, users.map((u) => `${u.userId}  ${u.role.padEnd(6)}  ${u.email}${u.dashboardSignIn ? '' : '  (no dashboard sign-in)'}`).join('\n') || 'no users');
      }),
    );
  team
    .command('remove-user')
    .description('take a user out of the team: their dashboard sessions end and the apps they connected are disconnected')
    .requiredOption('--team <teamId>', 'the team')
    .requiredOption('--user <userIdOrEmail>', "the user's id or email address")
    .action(async (opts) =>
      withServices(async (s) => {
        const user = await findTeamUser(s, opts.team, opts.user);
        if (!user) {
          // Removed already: the sweep is run again (one cut short, or a consent given while it ran).
          const gone = await removedUserOf(s, opts.team, opts.user);
          if (!gone) throw new TenancyError(`no user ${opts.user} in team ${opts.team}`);
          await sweepRemovedUser(s, { teamId: opts.team, ...gone }, await holdingsOfUser(s, { id: gone.userId, teamId: opts.team }, s.clock.now()));
          print(json(), { teamId: opts.team, userId: gone.userId, removed: true, alreadyRemoved: true }, `user ${gone.email} (${gone.userId}) was removed already; their sessions and apps are swept again`);
          return;
        }
        await removeUser(s, { teamId: opts.team, userId: user.id }, await holdingsOfUser(s, user, s.clock.now()));
        print(json(), { teamId: opts.team, userId: user.id, removed: true }, `user ${user.email} (${user.id}) removed from team ${opts.team}`);
      }),
    );
  team
    .command('set-role')
    .description("change a user's role; a user made member is disconnected from the apps they connected")
    .requiredOption('--team <teamId>', 'the team')
    .requiredOption('--user <userIdOrEmail>', "the user's id or email address")
    .addOption(choiceOption('--role <role>', ROLES).makeOptionMandatory())
    .action(async (opts) =>
      withServices(async (s) => {
        const user = await teamUser(s, opts.team, opts.user);
        const r = await changeUserRole(s, { teamId: opts.team, userId: user.id, role: opts.role }, await appsIfMember(s, user, opts.role, s.clock.now()));
        print(json(), { teamId: opts.team, userId: user.id, role: opts.role, changed: r.changed }, r.changed ? `user ${user.email} is now ${opts.role}` : `user ${user.email} was ${opts.role} already`);
      }),
    );
  team
    .command('set-password')
    .description("set a user's dashboard password (every session they had ends)")
    .requiredOption('--team <teamId>', 'the team')
    .requiredOption('--user <userIdOrEmail>', "the user's id or email address")
    .option('--password <password>', 'the new password (or set OUTREACH_USER_PASSWORD: kept out of shell history and ps)')
    .option('--remove-password', 'take the dashboard sign-in away instead')
    .action(async (opts) => {
      if (opts.removePassword && opts.password !== undefined) throw new TenancyError('give --password or --remove-password, not both');
      const password: string | null = opts.removePassword ? null : (passwordFrom(opts.password, 'OUTREACH_USER_PASSWORD') ?? null);
      if (!opts.removePassword && !password) throw new TenancyError('give --password (or set OUTREACH_USER_PASSWORD), or --remove-password');
      checkPassword(password ?? undefined);
      await withServices(async (s) => {
        const user = await teamUser(s, opts.team, opts.user);
        const sessionIds = await openSessionsOfUser(s.readModels, user.id, s.clock.now());
        await changeUserPassword(s, { teamId: opts.team, userId: user.id, password }, { sessionIds });
        print(
          json(),
          { teamId: opts.team, userId: user.id, dashboardSignIn: password !== null, sessionsEnded: sessionIds.length },
          `${password ? 'password changed' : 'dashboard sign-in removed'} for ${user.email}; ${sessionIds.length} session(s) ended`,
        );
      });
    });
  team
    .command('end-sessions')
    .description("sign a user out of every browser (a lost laptop, a stolen cookie)")
    .requiredOption('--team <teamId>', 'the team')
    .requiredOption('--user <userIdOrEmail>', "the user's id or email address")
    .action(async (opts) =>
      withServices(async (s) => {
        const user = await teamUser(s, opts.team, opts.user);
        const sessionIds = await openSessionsOfUser(s.readModels, user.id, s.clock.now());
        await signOutEverywhere(s, { teamId: opts.team, userId: user.id }, { sessionIds });
        print(json(), { teamId: opts.team, userId: user.id, sessionsEnded: sessionIds.length }, `${sessionIds.length} session(s) of ${user.email} ended, and any started before this`);
      }),
    );
}

/** The team's user named by id or email; TenancyError when the team has none. */
async function teamUser(s: Services, teamId: string, idOrEmail: string): Promise<UserDoc> {
  const user = await findTeamUser(s, teamId, idOrEmail);
  if (!user) throw new TenancyError(`no user ${idOrEmail} in team ${teamId}`);
  return user;
}

/** The team's user named by id or email, if any, from the read models brought up to the log (no server may be running). */
async function findTeamUser(s: Services, teamId: string, idOrEmail: string): Promise<UserDoc | null> {
  await requireTeam(s, teamId);
  await s.projections.catchUp();
  const user = idOrEmail.includes('@') ? await findUserByEmail(s.readModels, normaliseEmail(idOrEmail)) : await getUser(s.readModels, idOrEmail);
  return user && user.teamId === teamId ? user : null;
}
