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

t.test('RemoveUser, ChangeUserRole, ChangeUserPassword', async (t) => {
  const admin: TeamEvent = { type: 'UserAdded', data: { teamId: 'T1', userId: 'U2', email: 'a@example.test', role: 'admin', passwordHash: null, addedAt: now } };
  const withAdmin = [...created, admin];
  const removed = (userId: string, email: string): TeamEvent => ({ type: 'UserRemoved', data: { teamId: 'T1', userId, email, removedAt: later } });
  t.test('given an admin, when RemoveUser, then UserRemoved names the address (to free it)', async () => {
    given(teamDecider, withAdmin).when({ type: 'RemoveUser', data: { teamId: 'T1', userId: 'U2', now: later } }).then([removed('U2', 'a@example.test')]);
  });
  t.test('given a removed user, when AddUser with their address, then UserAdded', async () => {
    given(teamDecider, [...withAdmin, removed('U2', 'a@example.test')])
      .when({ type: 'AddUser', data: { teamId: 'T1', userId: 'U3', email: 'a@example.test', role: 'member', passwordHash: null, now: later } })
      .then([{ type: 'UserAdded', data: { teamId: 'T1', userId: 'U3', email: 'a@example.test', role: 'member', passwordHash: null, addedAt: later } }]);
  });
  t.test('given a removed user, when RemoveUser again, then it is refused', async () => {
    given(teamDecider, [...withAdmin, removed('U2', 'a@example.test')]).when({ type: 'RemoveUser', data: { teamId: 'T1', userId: 'U2', now: later } }).thenThrows(TeamRuleError, /not a member/);
  });
  t.test('given one owner, when RemoveUser or ChangeUserRole of the owner, then it is refused', async () => {
    given(teamDecider, withAdmin).when({ type: 'RemoveUser', data: { teamId: 'T1', userId: 'U1', now: later } }).thenThrows(TeamRuleError, /last owner/);
    given(teamDecider, withAdmin).when({ type: 'ChangeUserRole', data: { teamId: 'T1', userId: 'U1', role: 'member', now: later } }).thenThrows(TeamRuleError, /last owner/);
  });
  t.test('given two owners, when one is demoted, then UserRoleChanged with the previous role; then the other is the last', async () => {
    const promoted: TeamEvent = { type: 'UserRoleChanged', data: { teamId: 'T1', userId: 'U2', role: 'owner', previousRole: 'admin', changedAt: now } };
    given(teamDecider, withAdmin).when({ type: 'ChangeUserRole', data: { teamId: 'T1', userId: 'U2', role: 'owner', now } }).then([promoted]);
    const demoted: TeamEvent = { type: 'UserRoleChanged', data: { teamId: 'T1', userId: 'U1', role: 'member', previousRole: 'owner', changedAt: later } };
    given(teamDecider, [...withAdmin, promoted]).when({ type: 'ChangeUserRole', data: { teamId: 'T1', userId: 'U1', role: 'member', now: later } }).then([demoted]);
    given(teamDecider, [...withAdmin, promoted, demoted]).when({ type: 'RemoveUser', data: { teamId: 'T1', userId: 'U2', now: later } }).thenThrows(TeamRuleError, /last owner/);
  });
  t.test('given an admin, when ChangeUserRole to admin, then nothing happens', async () => {
    given(teamDecider, withAdmin).when({ type: 'ChangeUserRole', data: { teamId: 'T1', userId: 'U2', role: 'admin', now: later } }).then([]);
  });
  t.test('given a user, when ChangeUserPassword, then UserPasswordChanged (a null hash takes the sign-in away)', async () => {
    given(teamDecider, withAdmin)
      .when({ type: 'ChangeUserPassword', data: { teamId: 'T1', userId: 'U2', passwordHash: 'scrypt$new', now: later } })
      .then([{ type: 'UserPasswordChanged', data: { teamId: 'T1', userId: 'U2', passwordHash: 'scrypt$new', changedAt: later } }]);
    given(teamDecider, withAdmin).when({ type: 'ChangeUserPassword', data: { teamId: 'T1', userId: 'U9', passwordHash: null, now: later } }).thenThrows(TeamRuleError, /not a member/);
    given(teamDecider, []).when({ type: 'ChangeUserPassword', data: { teamId: 'T1', userId: 'U2', passwordHash: null, now: later } }).thenThrows(TeamRuleError, /team not found/);
  });
});

t.test('byOwner: a person managing the team must be an owner as its stream stands', async (t) => {
  const admin: TeamEvent = { type: 'UserAdded', data: { teamId: 'T1', userId: 'U2', email: 'a@example.test', role: 'admin', passwordHash: null, addedAt: now } };
  const withAdmin = [...created, admin];
  t.test('an owner may', async () => {
    given(teamDecider, withAdmin)
      .when({ type: 'RemoveUser', data: { teamId: 'T1', userId: 'U2', byOwner: 'U1', now: later } })
      .then([{ type: 'UserRemoved', data: { teamId: 'T1', userId: 'U2', email: 'a@example.test', removedAt: later } }]);
  });
  t.test('an admin, a removed owner or a stranger may not, whatever a read model says', async () => {
    given(teamDecider, withAdmin).when({ type: 'ChangeUserRole', data: { teamId: 'T1', userId: 'U1', role: 'member', byOwner: 'U2', now: later } }).thenThrows(TeamRuleError, /only the team's owners/);
    const demoted: TeamEvent = { type: 'UserRoleChanged', data: { teamId: 'T1', userId: 'U1', role: 'admin', previousRole: 'owner', changedAt: now } };
    const promoted: TeamEvent = { type: 'UserRoleChanged', data: { teamId: 'T1', userId: 'U2', role: 'owner', previousRole: 'admin', changedAt: now } };
    given(teamDecider, [...withAdmin, promoted, demoted]).when({ type: 'RemoveUser', data: { teamId: 'T1', userId: 'U2', byOwner: 'U1', now: later } }).thenThrows(TeamRuleError, /only the team's owners/);
    given(teamDecider, withAdmin)
      .when({ type: 'AddUser', data: { teamId: 'T1', userId: 'U3', email: 'n@example.test', role: 'owner', passwordHash: null, byOwner: 'U9', now: later } })
      .thenThrows(TeamRuleError, /only the team's owners/);
  });
  t.test('byOwner is not recorded', async () => {
    given(teamDecider, withAdmin)
      .when({ type: 'AddUser', data: { teamId: 'T1', userId: 'U3', email: 'n@example.test', role: 'member', passwordHash: null, byOwner: 'U1', now: later } })
      .then([{ type: 'UserAdded', data: { teamId: 'T1', userId: 'U3', email: 'n@example.test', role: 'member', passwordHash: null, addedAt: later } }]);
  });
});

t.test('invitations: nothing is claimed until the invited person accepts with the code', async (t) => {
  const expiresAt = '2026-01-22T12:00:00.000Z';
  const invite = { teamId: 'T1', invitationId: 'I1', email: 'n@example.test', role: 'admin' as const, codeHash: 'h1', byOwner: 'U1', expiresAt, now };
  const invited: TeamEvent = { type: 'UserInvited', data: { teamId: 'T1', invitationId: 'I1', email: 'n@example.test', role: 'admin', codeHash: 'h1', invitedBy: 'U1', expiresAt, invitedAt: now } };
  const accept = { teamId: 'T1', invitationId: 'I1', codeHash: 'h1', userId: 'U3', passwordHash: 'scrypt$p', now: later };
  t.test('an owner invites; an admin may not; a member of the team is not invited again', async () => {
    given(teamDecider, created).when({ type: 'InviteUser', data: invite }).then([invited]);
    const admin: TeamEvent = { type: 'UserAdded', data: { teamId: 'T1', userId: 'U2', email: 'a@example.test', role: 'admin', passwordHash: null, addedAt: now } };
    given(teamDecider, [...created, admin]).when({ type: 'InviteUser', data: { ...invite, byOwner: 'U2' } }).thenThrows(TeamRuleError, /only the team's owners/);
    given(teamDecider, created).when({ type: 'InviteUser', data: { ...invite, email: 'owner@example.test' } }).thenThrows(TeamRuleError, /already exists in the team/);
  });
  t.test('inviting the same address again replaces the open invitation once its mail went out', async () => {
    const again: TeamEvent = { type: 'UserInvited', data: { ...(invited.data as object), invitationId: 'I2', codeHash: 'h2', invitedAt: later } } as TeamEvent;
    given(teamDecider, [...created, invited]).when({ type: 'InviteUser', data: { ...invite, invitationId: 'I2', codeHash: 'h2', now: later } }).then([again]);
    const other: TeamEvent = { type: 'UserInvited', data: { ...(invited.data as object), invitationId: 'I3', email: 'o@example.test' } } as TeamEvent;
    given(teamDecider, [...created, invited, other, again])
      .when({ type: 'SupersedeInvitations', data: { teamId: 'T1', invitationId: 'I2', now: later } })
      .then([{ type: 'InvitationCancelled', data: { teamId: 'T1', invitationId: 'I1', cancelledAt: later } }]);
    const withdrawn: TeamEvent = { type: 'InvitationCancelled', data: { teamId: 'T1', invitationId: 'I2', cancelledAt: later } };
    given(teamDecider, [...created, invited, again, withdrawn])
      .when({ type: 'SupersedeInvitations', data: { teamId: 'T1', invitationId: 'I2', now: later } })
      .thenThrows(TeamRuleError, /withdrawn meanwhile/);
    // Two tabs: the first mail out does not cancel the invitation made after it (its mail may be on its way).
    given(teamDecider, [...created, invited, again]).when({ type: 'SupersedeInvitations', data: { teamId: 'T1', invitationId: 'I1', now: later } }).then([]);
  });
  t.test('the right code before it expires adds the user with the invitation role; once', async () => {
    const accepted: TeamEvent[] = [
      { type: 'InvitationAccepted', data: { teamId: 'T1', invitationId: 'I1', userId: 'U3', acceptedAt: later } },
      { type: 'UserAdded', data: { teamId: 'T1', userId: 'U3', email: 'n@example.test', role: 'admin', passwordHash: 'scrypt$p', addedAt: later } },
    ];
    given(teamDecider, [...created, invited]).when({ type: 'AcceptInvitation', data: accept }).then(accepted);
    given(teamDecider, [...created, invited, ...accepted]).when({ type: 'AcceptInvitation', data: accept }).thenThrows(TeamRuleError, /not valid/);
  });
  t.test('a wrong code, an expired, a cancelled or an unknown invitation: one refusal', async () => {
    given(teamDecider, [...created, invited]).when({ type: 'AcceptInvitation', data: { ...accept, codeHash: 'h9' } }).thenThrows(TeamRuleError, /not valid/);
    given(teamDecider, [...created, invited]).when({ type: 'AcceptInvitation', data: { ...accept, now: expiresAt } }).thenThrows(TeamRuleError, /not valid/);
    const cancelled: TeamEvent = { type: 'InvitationCancelled', data: { teamId: 'T1', invitationId: 'I1', cancelledAt: now } };
    given(teamDecider, [...created, invited, cancelled]).when({ type: 'AcceptInvitation', data: accept }).thenThrows(TeamRuleError, /not valid/);
    given(teamDecider, []).when({ type: 'AcceptInvitation', data: accept }).thenThrows(TeamRuleError, /not valid/);
  });
  t.test('an owner cancels an open invitation; not one that is not open', async () => {
    given(teamDecider, [...created, invited])
      .when({ type: 'CancelInvitation', data: { teamId: 'T1', invitationId: 'I1', byOwner: 'U1', now: later } })
      .then([{ type: 'InvitationCancelled', data: { teamId: 'T1', invitationId: 'I1', cancelledAt: later } }]);
    given(teamDecider, created).when({ type: 'CancelInvitation', data: { teamId: 'T1', invitationId: 'I1', byOwner: 'U1', now: later } }).thenThrows(TeamRuleError, /no such invitation/);
  });
});

t.test("an owner's open invitations lapse when they leave or stop being an owner; the others' stay", async () => {
  const expiresAt = '2026-01-22T12:00:00.000Z';
  const second: TeamEvent = { type: 'UserAdded', data: { teamId: 'T1', userId: 'U2', email: 'o2@example.test', role: 'owner', passwordHash: null, addedAt: now } };
  const invitedBy = (by: string | null, id: string): TeamEvent => ({
    type: 'UserInvited',
    data: { teamId: 'T1', invitationId: id, email: `${id}@example.test`, role: 'admin', codeHash: id, invitedBy: by, expiresAt, invitedAt: now },
  });
  const history = [...created, second, invitedBy('U2', 'I1'), invitedBy('U1', 'I2'), invitedBy(null, 'I3')];
  given(teamDecider, history)
    .when({ type: 'RemoveUser', data: { teamId: 'T1', userId: 'U2', now: later } })
    .then([
      { type: 'UserRemoved', data: { teamId: 'T1', userId: 'U2', email: 'o2@example.test', removedAt: later } },
      { type: 'InvitationCancelled', data: { teamId: 'T1', invitationId: 'I1', cancelledAt: later } },
    ]);
  given(teamDecider, history)
    .when({ type: 'ChangeUserRole', data: { teamId: 'T1', userId: 'U2', role: 'admin', now: later } })
    .then([
      { type: 'UserRoleChanged', data: { teamId: 'T1', userId: 'U2', role: 'admin', previousRole: 'owner', changedAt: later } },
      { type: 'InvitationCancelled', data: { teamId: 'T1', invitationId: 'I1', cancelledAt: later } },
    ]);
});

t.test('SignOutEverywhere: recorded for a user of the team; refused for anyone else', async () => {
  given(teamDecider, created)
    .when({ type: 'SignOutEverywhere', data: { teamId: 'T1', userId: 'U1', now: later } })
    .then([{ type: 'UserSignedOutEverywhere', data: { teamId: 'T1', userId: 'U1', signedOutAt: later } }]);
  given(teamDecider, created).when({ type: 'SignOutEverywhere', data: { teamId: 'T1', userId: 'U9', now: later } }).thenThrows(TeamRuleError, /not a member/);
});
