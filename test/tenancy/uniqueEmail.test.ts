import t from 'tap';
import { addUser, createTeam, TenancyError } from '../../src/commands/tenancy.ts';
import { startTestApp } from '../helpers/testApp.ts';

t.test('an email address belongs to one user across teams, even when sign-ups race', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const results = await Promise.allSettled(
    Array.from({ length: 8 }, (_, i) => createTeam(app.services, { name: `Team ${i}`, ownerEmail: 'Race@Example.test' })),
  );
  const won = results.filter((r) => r.status === 'fulfilled');
  const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  t.equal(won.length, 1, 'exactly one team got the address');
  t.equal(lost.length, 7);
  for (const r of lost) t.type(r.reason, TenancyError);

  const winner = (won[0] as PromiseFulfilledResult<{ teamId: string }>).value;
  await t.rejects(addUser(app.services, { teamId: winner.teamId, email: 'race@example.test', role: 'admin' }), { message: /a user with email race@example.test exists/ }, 'case does not make a new address');
  const other = await createTeam(app.services, { name: 'Other', ownerEmail: 'other@example.test' });
  await t.rejects(addUser(app.services, { teamId: other.teamId, email: 'RACE@example.test', role: 'member' }), { message: /a user with email race@example.test exists/ }, 'nor does another team');
  const ok = await addUser(app.services, { teamId: other.teamId, email: 'new@example.test', role: 'member' });
  t.match(ok.userId, /^[0-9A-Z]{26}$/);
});
