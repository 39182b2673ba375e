import { type Decider, assertNever } from './decider.ts';

export const BILLING_STATUSES = ['healthy', 'past_due', 'canceled'] as const;
export type BillingStatus = (typeof BILLING_STATUSES)[number];
export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];
/** "You are an admin": the role with its article. */
export const aRole = (role: Role) => `${role === 'member' ? 'a' : 'an'} ${role}`;

export const teamStream = (teamId: string) => `team-${teamId}`;

export type TeamEvent =
  | { type: 'TeamCreated'; data: { teamId: string; name: string; createdAt: string } }
  | { type: 'TeamBillingStatusChanged'; data: { teamId: string; billingStatus: BillingStatus; changedAt: string } }
  | {
      type: 'UserAdded';
      data: { teamId: string; userId: string; email: string; role: Role; passwordHash: string | null; addedAt: string };
    }
  | { type: 'UserRemoved'; data: { teamId: string; userId: string; email: string; removedAt: string } }
  | { type: 'UserRoleChanged'; data: { teamId: string; userId: string; role: Role; previousRole: Role; changedAt: string } }
  | { type: 'UserPasswordChanged'; data: { teamId: string; userId: string; passwordHash: string | null; changedAt: string } }
  /** Every dashboard session of the user so far is over, those no read model listed yet too. */
  | { type: 'UserSignedOutEverywhere'; data: { teamId: string; userId: string; signedOutAt: string } }
  | {
      type: 'UserInvited';
      data: { teamId: string; invitationId: string; email: string; role: Role; codeHash: string; invitedBy: string | null; expiresAt: string; invitedAt: string };
    }
  | { type: 'InvitationCancelled'; data: { teamId: string; invitationId: string; cancelledAt: string } }
  | { type: 'InvitationAccepted'; data: { teamId: string; invitationId: string; userId: string; acceptedAt: string } };

export type TeamCommand =
  | {
      type: 'CreateTeam';
      data: { teamId: string; name: string; owner: { userId: string; email: string; passwordHash: string | null }; now: string };
    }
  | { type: 'SetTeamBillingStatus'; data: { teamId: string; billingStatus: BillingStatus; now: string } }
  /** `byOwner`: the team's person asking (the dashboard), who must be one of its owners; absent for the operator. */
  | { type: 'AddUser'; data: { teamId: string; userId: string; email: string; role: Role; passwordHash: string | null; byOwner?: string; now: string } }
  | { type: 'RemoveUser'; data: { teamId: string; userId: string; byOwner?: string; now: string } }
  | { type: 'ChangeUserRole'; data: { teamId: string; userId: string; role: Role; byOwner?: string; now: string } }
  /** A null hash takes the user's dashboard sign-in away. */
  | { type: 'ChangeUserPassword'; data: { teamId: string; userId: string; passwordHash: string | null; now: string } }
  | { type: 'SignOutEverywhere'; data: { teamId: string; userId: string; now: string } }
  | { type: 'InviteUser'; data: { teamId: string; invitationId: string; email: string; role: Role; codeHash: string; byOwner?: string; expiresAt: string; now: string } }
  /** Once its mail went out, an invitation replaces the others still open for the same address (a code lost, a wrong role). */
  | { type: 'SupersedeInvitations'; data: { teamId: string; invitationId: string; now: string } }
  | { type: 'CancelInvitation'; data: { teamId: string; invitationId: string; byOwner?: string; now: string } }
  /** The invited person, with the invitation's code (its hash) and a password of their own; the address is claimed by the caller first. */
  | { type: 'AcceptInvitation'; data: { teamId: string; invitationId: string; codeHash: string; userId: string; passwordHash: string; now: string } };

export interface TeamMember {
  email: string;
  role: Role;
}

/** An invitation not yet accepted nor cancelled (an expired one stays here, refused by its time). */
export interface TeamInvitation {
  email: string;
  role: Role;
  /** The owner who made it (null: the operator); it lapses when they leave or stop being an owner. */
  invitedBy: string | null;
  codeHash: string;
  expiresAt: string;
  invitedAt: string;
}

export type TeamState =
  | { status: 'none' }
  | { status: 'exists'; billingStatus: BillingStatus; users: ReadonlyMap<string, TeamMember>; invitations: ReadonlyMap<string, TeamInvitation> };

/** How long an invitation's code can be used. */
export const INVITATION_TTL_MS = 7 * 24 * 3600_000;

export class TeamRuleError extends Error {}

export const teamDecider: Decider<TeamState, TeamCommand, TeamEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'TeamCreated':
        return { status: 'exists', billingStatus: 'healthy', users: new Map(), invitations: new Map() };
      case 'TeamBillingStatusChanged':
        return state.status === 'exists' ? { ...state, billingStatus: event.data.billingStatus } : state;
      case 'UserAdded':
        return withUsers(state, (users) => users.set(event.data.userId, { email: event.data.email, role: event.data.role }));
      case 'UserRemoved':
        return withUsers(state, (users) => users.delete(event.data.userId));
      case 'UserRoleChanged':
        return withUsers(state, (users) => {
          const user = users.get(event.data.userId);
          if (user) users.set(event.data.userId, { ...user, role: event.data.role });
        });
      case 'UserPasswordChanged':
      case 'UserSignedOutEverywhere':
        return state;
      case 'UserInvited': {
        const { invitationId, email, role, invitedBy, codeHash, expiresAt, invitedAt } = event.data;
        return withInvitations(state, (open) => open.set(invitationId, { email, role, invitedBy, codeHash, expiresAt, invitedAt }));
      }
      case 'InvitationCancelled':
      case 'InvitationAccepted':
        return withInvitations(state, (open) => open.delete(event.data.invitationId));
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'CreateTeam': {
        if (state.status !== 'none') throw new TeamRuleError('team already exists');
        const { teamId, name, owner, now } = command.data;
        return [
          { type: 'TeamCreated', data: { teamId, name, createdAt: now } },
          { type: 'UserAdded', data: { teamId, ...owner, role: 'owner', addedAt: now } },
        ];
      }
      case 'SetTeamBillingStatus': {
        if (state.status !== 'exists') throw new TeamRuleError('team not found');
        if (state.billingStatus === command.data.billingStatus) return [];
        const { teamId, billingStatus, now } = command.data;
        return [{ type: 'TeamBillingStatusChanged', data: { teamId, billingStatus, changedAt: now } }];
      }
      case 'AddUser': {
        if (state.status !== 'exists') throw new TeamRuleError('team not found');
        const { now, byOwner, ...user } = command.data;
        requireOwner(state, byOwner);
        requireNewToTeam(state, user.email);
        return [{ type: 'UserAdded', data: { ...user, addedAt: now } }];
      }
      case 'RemoveUser': {
        const { teamId, userId, byOwner, now } = command.data;
        requireOwner(state, byOwner);
        const user = member(state, userId);
        if (user.role === 'owner' && owners(state) === 1) throw new TeamRuleError('the team\'s last owner cannot be removed: make another user owner first');
        return [{ type: 'UserRemoved', data: { teamId, userId, email: user.email, removedAt: now } }, ...invitationsLapsing(state, teamId, userId, now)];
      }
      case 'ChangeUserRole': {
        const { teamId, userId, role, byOwner, now } = command.data;
        requireOwner(state, byOwner);
        const user = member(state, userId);
        if (user.role === role) return [];
        if (user.role === 'owner' && owners(state) === 1) throw new TeamRuleError('the team\'s last owner cannot change role: make another user owner first');
        return [
          { type: 'UserRoleChanged', data: { teamId, userId, role, previousRole: user.role, changedAt: now } },
          ...(user.role === 'owner' ? invitationsLapsing(state, teamId, userId, now) : []),
        ];
      }
      case 'ChangeUserPassword': {
        const { teamId, userId, passwordHash, now } = command.data;
        member(state, userId);
        return [{ type: 'UserPasswordChanged', data: { teamId, userId, passwordHash, changedAt: now } }];
      }
      case 'SignOutEverywhere': {
        const { teamId, userId, now } = command.data;
        member(state, userId);
        return [{ type: 'UserSignedOutEverywhere', data: { teamId, userId, signedOutAt: now } }];
      }
      case 'InviteUser': {
        if (state.status !== 'exists') throw new TeamRuleError('team not found');
        const { teamId, invitationId, email, role, codeHash, byOwner, expiresAt, now } = command.data;
        requireOwner(state, byOwner);
        requireNewToTeam(state, email);
        return [{ type: 'UserInvited', data: { teamId, invitationId, email, role, codeHash, invitedBy: byOwner ?? null, expiresAt, invitedAt: now } }];
      }
      case 'SupersedeInvitations': {
        const { teamId, invitationId, now } = command.data;
        const newer = state.status === 'exists' ? state.invitations.get(invitationId) : undefined;
        // Cancelled meanwhile (its owner left, or a later one replaced it): it replaces nothing, and the owner is told.
        if (state.status !== 'exists' || !newer) throw new TeamRuleError('the invitation was withdrawn meanwhile: its owner left, or the address was invited again');
        // Only those made before it (the map keeps the stream's order): one made after it, whose mail may still be on its way, stays.
        const open = [...state.invitations];
        const at = open.findIndex(([id]) => id === invitationId);
        return open
          .slice(0, at)
          .filter(([, i]) => i.email === newer.email)
          .map(([id]): TeamEvent => ({ type: 'InvitationCancelled', data: { teamId, invitationId: id, cancelledAt: now } }));
      }
      case 'CancelInvitation': {
        const { teamId, invitationId, byOwner, now } = command.data;
        requireOwner(state, byOwner);
        if (state.status !== 'exists' || !state.invitations.has(invitationId)) throw new TeamRuleError('no such invitation: accepted, cancelled or never made');
        return [{ type: 'InvitationCancelled', data: { teamId, invitationId, cancelledAt: now } }];
      }
      case 'AcceptInvitation': {
        const { teamId, invitationId, codeHash, userId, passwordHash, now } = command.data;
        const invitation = openInvitation(state, invitationId, codeHash, now);
        requireNewToTeam(state, invitation.email);
        return [
          { type: 'InvitationAccepted', data: { teamId, invitationId, userId, acceptedAt: now } },
          { type: 'UserAdded', data: { teamId, userId, email: invitation.email, role: invitation.role, passwordHash, addedAt: now } },
        ];
      }
      default:
        return assertNever(command);
    }
  },
};

function withUsers(state: TeamState, change: (users: Map<string, TeamMember>) => void): TeamState {
  if (state.status !== 'exists') return state;
  const users = new Map(state.users);
  change(users);
  return { ...state, users };
}

/** The open invitations an owner made, cancelled as they leave or stop being an owner: only owners invite, and an invitation stands no longer than its maker. */
function invitationsLapsing(state: TeamState, teamId: string, userId: string, now: string): TeamEvent[] {
  if (state.status !== 'exists') return [];
  return [...state.invitations]
    .filter(([, i]) => i.invitedBy === userId)
    .map(([invitationId]) => ({ type: 'InvitationCancelled', data: { teamId, invitationId, cancelledAt: now } }) as TeamEvent);
}

function withInvitations(state: TeamState, change: (open: Map<string, TeamInvitation>) => void): TeamState {
  if (state.status !== 'exists') return state;
  const invitations = new Map(state.invitations);
  change(invitations);
  return { ...state, invitations };
}

/**
 * The invitation this code opens, if it is open and not expired at `now`. One refusal for every
 * case: whoever holds a wrong or stale code learns nothing of the team.
 */
export function openInvitation(state: TeamState, invitationId: string, codeHash: string, now: string): TeamInvitation {
  const invitation = state.status === 'exists' ? state.invitations.get(invitationId) : undefined;
  if (!invitation || invitation.codeHash !== codeHash || Date.parse(invitation.expiresAt) <= Date.parse(now)) {
    throw new TeamRuleError('this invitation code is not valid: it is wrong, was used or cancelled, or expired');
  }
  return invitation;
}

/** No user of the team has this address yet. */
function requireNewToTeam(state: TeamState, email: string): void {
  if (state.status === 'exists' && [...state.users.values()].some((u) => u.email === email)) throw new TeamRuleError('a user with this email already exists in the team');
}

/** The team's user with this id; TeamRuleError when the team or the user is not there. */
function member(state: TeamState, userId: string): TeamMember {
  if (state.status !== 'exists') throw new TeamRuleError('team not found');
  const user = state.users.get(userId);
  if (!user) throw new TeamRuleError(`user ${userId} is not a member of this team`);
  return user;
}

/** The person asking must be an owner as the team's stream stands (not as a lagging read model says). */
function requireOwner(state: TeamState, byOwner: string | undefined): void {
  if (byOwner === undefined) return;
  if (state.status !== 'exists' || state.users.get(byOwner)?.role !== 'owner') throw new TeamRuleError("only the team's owners manage its people");
}

const owners = (state: TeamState) => (state.status === 'exists' ? [...state.users.values()].filter((u) => u.role === 'owner').length : 0);

/**
 * Whether the user may still stand behind an app they connected: only owners and admins authorize
 * apps, so one who left the team or became a member no longer does (the grant's revocation reason).
 */
/** Why the person who authorized an app can no longer stand behind it (a grant revocation reason). */
export type AuthorizerGone = 'user_removed' | 'user_demoted';

export function appAuthorizerGone(state: TeamState, userId: string): AuthorizerGone | null {
  const user = state.status === 'exists' ? state.users.get(userId) : undefined;
  if (!user) return 'user_removed';
  return canAuthorizeApps(user.role) ? null : 'user_demoted';
}

/** Owners and admins authorize apps (and the apps' access lasts as long as that stands); members do not. */
export const canAuthorizeApps = (role: Role) => role === 'owner' || role === 'admin';

/** Whether this user (as a read model has them, or null when gone) still stands behind apps they connected to `teamId`. */
export const standsBehindApps = (user: { teamId: string; role: Role } | null, teamId: string) => user !== null && user.teamId === teamId && canAuthorizeApps(user.role);
