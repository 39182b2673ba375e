import t from 'tap';
import { type TeamEvent, TeamRuleError, teamDecider } from '../../src/domain/team.ts';
import { given } from '../helpers/givenWhenThen.ts';

const now = '2026-01-15T12:00:00.000Z';
const later = '2026-01-16T08:30:00.000Z';
const owner = { userId: 'U1', email: 'owner@example.test', passwordHash: 'scrypt$16384$8$1$salt$hash' };
const TeamCreated: TeamEvent = { type: 'TeamCreated', data: { teamId: 'T1', name: 'Acme', createdAt: now } };
const OwnerAdded: TeamEvent = {
  type: 'UserAdded',
  data: { teamId: 'T1', userId: 'U1', email: 'owner@example.test', role: 'owner', passwordHash: owner.passwordHash, addedAt: now },
};
const created = [TeamCreated, OwnerAdded];

t.test('CreateTeam', async (t) => {
  t.test('given no team, when CreateTeam, then TeamCreated and the owner is added with role owner', async () => {
    given(teamDecider, [])
      .when({ type: 'CreateTeam', data: { teamId: 'T1', name: 'Acme', owner, now } })
      .then(created);
  });
  t.test('an owner without a password has a null password hash', async () => {
    given(teamDecider, [])
      .when({ type: 'CreateTeam', data: { teamId: 'T1', name: 'Acme', owner: { ...owner, passwordHash: null }, now } })
      .then([TeamCreated, { type: 'UserAdded', data: { ...(OwnerAdded.data as object), passwordHash: null } } as TeamEvent]);
  });
  t.test('given a team, when CreateTeam again, then it is refused', async () => {
    given(teamDecider, created)
      .when({ type: 'CreateTeam', data: { teamId: 'T1', name: 'Acme', owner, now } })
      .thenThrows(TeamRuleError, /already exists/);
  });
});

t.test('SetTeamBillingStatus', async (t) => {
  t.test('given a healthy team, when set to past_due, then TeamBillingStatusChanged', async () => {
    given(teamDecider, created)
      .when({ type: 'SetTeamBillingStatus', data: { teamId: 'T1', billingStatus: 'past_due', now: later } })
      .then([{ type: 'TeamBillingStatusChanged', data: { teamId: 'T1', billingStatus: 'past_due', changedAt: later } }]);
  });
  t.test('given a new team (healthy), when set to healthy, then nothing happens', async () => {
    given(teamDecider, created)
      .when({ type: 'SetTeamBillingStatus', data: { teamId: 'T1', billingStatus: 'healthy', now: later } })
      .then([]);
  });
  t.test('given a canceled team, when set to canceled again, then nothing happens', async () => {
    const canceled: TeamEvent = { type: 'TeamBillingStatusChanged', data: { teamId: 'T1', billingStatus: 'canceled', changedAt: now } };
    given(teamDecider, [...created, canceled])
      .when({ type: 'SetTeamBillingStatus', data: { teamId: 'T1', billingStatus: 'canceled', now: later } })
      .then([]);
  });
  t.test('given a past_due team, when set back to healthy, then TeamBillingStatusChanged', async () => {
    const pastDue: TeamEvent = { type: 'TeamBillingStatusChanged', data: { teamId: 'T1', billingStatus: 'past_due', changedAt: now } };
    given(teamDecider, [...created, pastDue])
      .when({ type: 'SetTeamBillingStatus', data: { teamId: 'T1', billingStatus: 'healthy', now: later } })
      .then([{ type: 'TeamBillingStatusChanged', data: { teamId: 'T1', billingStatus: 'healthy', changedAt: later } }]);
  });
  t.test('given no team, when SetTeamBillingStatus, then it is refused', async () => {
    given(teamDecider, [])
      .when({ type: 'SetTeamBillingStatus', data: { teamId: 'T1', billingStatus: 'past_due', now } })
      .thenThrows(TeamRuleError, /not found/);
  });
});

t.test('AddUser', async (t) => {
  const add = (email: string, role: 'admin' | 'member' = 'admin') =>
    ({ type: 'AddUser', data: { teamId: 'T1', userId: 'U2', email, role, passwordHash: null, now: later } }) as const;
  t.test('given a team, when AddUser, then UserAdded with the role', async () => {
    given(teamDecider, created)
      .when(add('admin@example.test'))
      .then([{ type: 'UserAdded', data: { teamId: 'T1', userId: 'U2', email: 'admin@example.test', role: 'admin', passwordHash: null, addedAt: later } }]);
  });
  t.test('given a team, when AddUser with the owner email, then it is refused', async () => {
    given(teamDecider, created).when(add('owner@example.test', 'member')).thenThrows(TeamRuleError, /already exists/);
  });
  t.test('given a user added later, when AddUser with that email again, then it is refused', async () => {
    const member: TeamEvent = {
      type: 'UserAdded',
      data: { teamId: 'T1', userId: 'U3', email: 'm@example.test', role: 'member', passwordHash: null, addedAt: now },
    };
    given(teamDecider, [...created, member]).when(add('m@example.test')).thenThrows(TeamRuleError, /already exists/);
  });
  t.test('given no team, when AddUser, then it is refused', async () => {
    given(teamDecider, []).when(add('a@example.test')).thenThrows(TeamRuleError, /not found/);
  });
});
