import t from 'tap';
import { EmailTakenError, userEmailDecider } from '../../src/domain/userEmail.ts';
import { given } from '../helpers/givenWhenThen.ts';

const claim = (userId: string) => ({
  type: 'ClaimUserEmail' as const,
  data: { email: 'ann@example.test', userId, teamId: 'T1', now: '2026-01-15T12:00:00.000Z' },
});

t.test('an unclaimed address is claimed by the new user', async () => {
  given(userEmailDecider, [])
    .when(claim('U1'))
    .then([{ type: 'UserEmailClaimed', data: { email: 'ann@example.test', userId: 'U1', teamId: 'T1', claimedAt: '2026-01-15T12:00:00.000Z' } }]);
});

t.test('a claimed address cannot be claimed again, not even by the same user', async () => {
  const claimed = [{ type: 'UserEmailClaimed' as const, data: { email: 'ann@example.test', userId: 'U1', teamId: 'T1', claimedAt: '2026-01-15T12:00:00.000Z' } }];
  given(userEmailDecider, claimed).when(claim('U2')).thenThrows(EmailTakenError);
  given(userEmailDecider, claimed).when(claim('U1')).thenThrows(EmailTakenError);
});

t.test('a released claim can be claimed again; only the claim’s own user releases it', async () => {
  const claimed = [{ type: 'UserEmailClaimed' as const, data: { email: 'ann@example.test', userId: 'U1', teamId: 'T1', claimedAt: '2026-01-15T12:00:00.000Z' } }];
  const release = (userId: string) => ({ type: 'ReleaseUserEmail' as const, data: { email: 'ann@example.test', userId, reason: 'team already exists', now: '2026-01-15T12:00:01.000Z' } });
  const released = { type: 'UserEmailReleased' as const, data: { email: 'ann@example.test', userId: 'U1', reason: 'team already exists', releasedAt: '2026-01-15T12:00:01.000Z' } };
  given(userEmailDecider, claimed).when(release('U1')).then([released]);
  given(userEmailDecider, claimed).when(release('U2')).then([]);
  given(userEmailDecider, []).when(release('U1')).then([]);
  given(userEmailDecider, [...claimed, released]).when(release('U1')).then([]);
  given(userEmailDecider, [...claimed, released])
    .when(claim('U2'))
    .then([{ type: 'UserEmailClaimed', data: { email: 'ann@example.test', userId: 'U2', teamId: 'T1', claimedAt: '2026-01-15T12:00:00.000Z' } }]);
});
