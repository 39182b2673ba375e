import t from 'tap';
import { type TeamEvent, TeamRuleError, teamDecider } from '../../src/domain/team.ts';
import { SiteRuleError } from '../../src/domain/site.ts';
import { given } from './givenWhenThen.ts';

// The helper itself must be able to fail, or every decider test above could pass vacuously.
const now = '2026-01-15T12:00:00.000Z';
const created: TeamEvent[] = [
  { type: 'TeamCreated', data: { teamId: 'T1', name: 'Acme', createdAt: now } },
  { type: 'UserAdded', data: { teamId: 'T1', userId: 'U1', email: 'o@example.test', role: 'owner', passwordHash: null, addedAt: now } },
];
const setBilling = { type: 'SetTeamBillingStatus', data: { teamId: 'T1', billingStatus: 'past_due', now } } as const;

t.test('then fails when the decided events differ', async (t) => {
  t.throws(() => given(teamDecider, created).when(setBilling).then([]), { name: 'AssertionError' });
});
t.test('thenThrows fails when decide does not throw', async (t) => {
  t.throws(() => given(teamDecider, created).when(setBilling).thenThrows(TeamRuleError), { name: 'AssertionError' });
});
t.test('thenThrows fails on another error class or message', async (t) => {
  t.throws(() => given(teamDecider, []).when(setBilling).thenThrows(SiteRuleError), { name: 'AssertionError' });
  t.throws(() => given(teamDecider, []).when(setBilling).thenThrows(TeamRuleError, /already exists/), { name: 'AssertionError' });
});
t.test('then returns the state after the decided events', async (t) => {
  const state = given(teamDecider, created).when(setBilling).then([
    { type: 'TeamBillingStatusChanged', data: { teamId: 'T1', billingStatus: 'past_due', changedAt: now } },
  ]);
  t.match(state, { status: 'exists', billingStatus: 'past_due' });
});
