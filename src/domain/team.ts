import { type Decider, assertNever } from './decider.ts';

export const BILLING_STATUSES = ['healthy', 'past_due', 'canceled'] as const;
export type BillingStatus = (typeof BILLING_STATUSES)[number];
export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export const teamStream = (teamId: string) => `team-${teamId}`;

export type TeamEvent =
  | { type: 'TeamCreated'; data: { teamId: string; name: string; createdAt: string } }
  | { type: 'TeamBillingStatusChanged'; data: { teamId: string; billingStatus: BillingStatus; changedAt: string } }
  | {
      type: 'UserAdded';
      data: { teamId: string; userId: string; email: string; role: Role; passwordHash: string | null; addedAt: string };
    };

export type TeamCommand =
  | {
      type: 'CreateTeam';
      data: { teamId: string; name: string; owner: { userId: string; email: string; passwordHash: string | null }; now: string };
    }
  | { type: 'SetTeamBillingStatus'; data: { teamId: string; billingStatus: BillingStatus; now: string } }
  | { type: 'AddUser'; data: { teamId: string; userId: string; email: string; role: Role; passwordHash: string | null; now: string } };

export type TeamState =
  | { status: 'none' }
  | { status: 'exists'; billingStatus: BillingStatus; emails: Set<string> };

export class TeamRuleError extends Error {}

export const teamDecider: Decider<TeamState, TeamCommand, TeamEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'TeamCreated':
        return { status: 'exists', billingStatus: 'healthy', emails: new Set() };
      case 'TeamBillingStatusChanged':
        return state.status === 'exists' ? { ...state, billingStatus: event.data.billingStatus } : state;
      case 'UserAdded':
        return state.status === 'exists' ? { ...state, emails: new Set([...state.emails, event.data.email]) } : state;
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
        const { now, ...user } = command.data;
        if (state.emails.has(user.email)) throw new TeamRuleError('a user with this email already exists in the team');
        return [{ type: 'UserAdded', data: { ...user, addedAt: now } }];
      }
      default:
        return assertNever(command);
    }
  },
};
