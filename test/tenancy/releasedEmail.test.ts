import t from 'tap';
import { addUser, createTeam } from '../../src/commands/tenancy.ts';
import { userEmailStream } from '../../src/domain/userEmail.ts';
import { sha256Hex } from '../../src/commands/credentials.ts';
import type { EventStore } from '../../src/ports/eventStore.ts';
import { startTestApp } from '../helpers/testApp.ts';

/** A sign-up whose step after the email claim is refused gives the address back: the same address signs up next. */
t.test('an address claimed by a failed sign-up is released and reusable', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const ctx = app.services;
  const emailEvents = async (email: string) => (await ctx.events.readStream(userEmailStream(sha256Hex(email)))).map((e) => e.type);

  await t.test('team creation refused by the team decider (the team id exists)', async (t) => {
    const existing = await createTeam(ctx, { name: 'Existing', ownerEmail: 'first@example.test' });
    const ids = [existing.teamId, ctx.newId()];
    const colliding = { ...ctx, newId: () => ids.shift() ?? ctx.newId() };
    await t.rejects(createTeam(colliding, { name: 'Doomed', ownerEmail: 'Ann@Example.test' }), { message: /team already exists/ });
    t.same(await emailEvents('ann@example.test'), ['UserEmailClaimed', 'UserEmailReleased'], 'the claim was compensated');
    const again = await createTeam(ctx, { name: 'Ann', ownerEmail: 'ann@example.test' });
    t.match(again.teamId, /^[0-9A-Z]{26}$/, 'the same address signs up');
    t.same(await emailEvents('ann@example.test'), ['UserEmailClaimed', 'UserEmailReleased', 'UserEmailClaimed']);
    await t.rejects(createTeam(ctx, { name: 'Twice', ownerEmail: 'ann@example.test' }), { message: /a user with email ann@example.test exists/ }, 'and is then taken');
  });

  await t.test('user add whose team append fails', async (t) => {
    const team = await createTeam(ctx, { name: 'Team', ownerEmail: 'owner@example.test' });
    const failing: EventStore = Object.create(ctx.events);
    failing.append = async (streamId, events, expected) => {
      if (streamId.startsWith('team-')) throw new Error('the store refused the append');
      return ctx.events.append(streamId, events, expected);
    };
    await t.rejects(addUser({ ...ctx, events: failing }, { teamId: team.teamId, email: 'bob@example.test', role: 'member' }), { message: /the store refused the append/ });
    t.same(await emailEvents('bob@example.test'), ['UserEmailClaimed', 'UserEmailReleased']);
    const added = await addUser(ctx, { teamId: team.teamId, email: 'bob@example.test', role: 'member' });
    t.match(added.userId, /^[0-9A-Z]{26}$/, 'the same address is added');
  });
});
