import t from 'tap';
import { findUserByEmail } from '../../src/readModels/users.ts';
import { createTenant } from '../helpers/testApp.ts';
import { Browser, PASSWORD, addTeamUser, formFields, startOAuthApp } from '../oauth/helpers.ts';

/** The dashboard's team page: owners change roles and remove people; everyone changes their own password. */

const signedIn = async (browser: Browser) => (await browser.request('/dashboard')).status === 200;
const csrfOf = async (browser: Browser) => formFields((await browser.request('/dashboard/team')).text, '/dashboard/password').csrf!;

t.test('owners change roles and remove people; admins and members only see the list', async (t) => {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const adminEmail = await addTeamUser(app, tenant.teamId, 'admin');
  const memberEmail = await addTeamUser(app, tenant.teamId, 'member');
  const [owner, admin, member] = [new Browser(issuer), new Browser(issuer), new Browser(issuer)];
  t.equal((await owner.signIn(ownerEmail)).status, 303);
  t.equal((await admin.signIn(adminEmail)).status, 303);
  t.equal((await member.signIn(memberEmail)).status, 303);
  const memberId = (await findUserByEmail(app.services.readModels, memberEmail))!.id;
  const adminId = (await findUserByEmail(app.services.readModels, adminEmail))!.id;

  const page = await owner.request('/dashboard/team');
  t.equal(page.status, 200);
  for (const email of [ownerEmail, adminEmail, memberEmail]) t.match(page.text, email);
  t.match(page.text, `action="/dashboard/team/users/${memberId}/remove"`, 'the owner has the forms');
  const adminPage = await admin.request('/dashboard/team');
  t.match(adminPage.text, memberEmail, 'an admin sees the team');
  t.notMatch(adminPage.text, '/remove"', 'without the forms');
  const byAdmin = await admin.request(`/dashboard/team/users/${memberId}/remove`, { form: { csrf: await csrfOf(admin) } });
  t.equal(byAdmin.status, 403, "an admin cannot remove people (a forged form is refused)");
  t.match(byAdmin.text, /Only the team&#39;s owners remove people/);
  t.ok(await signedIn(member), 'nothing happened');

  const csrf = await csrfOf(owner);
  t.equal((await owner.request(`/dashboard/team/users/${adminId}/role`, { form: { csrf, role: 'boss' } })).status, 400, 'an unknown role');
  const demoted = await owner.request(`/dashboard/team/users/${adminId}/role`, { form: { csrf, role: 'member' } });
  t.equal(demoted.status, 303);
  t.match((await admin.request('/dashboard')).text, /\(member\)/, 'the admin is a member at their next request');
  const lastOwner = await owner.request(`/dashboard/team/users/${tenant.ownerUserId}/role`, { form: { csrf, role: 'admin' } });
  t.equal(lastOwner.status, 409);
  t.match(lastOwner.text, /The team&#39;s last owner cannot change role: make another user owner first\./);

  const other = await createTenant(app.services, { email: 'someone@other.example', password: PASSWORD });
  const otherTeam = await owner.request(`/dashboard/team/users/${other.ownerUserId}/remove`, { form: { csrf } });
  t.equal(otherTeam.status, 404, "another team's person is a missing one");
  t.equal((await new Browser(issuer).signIn('someone@other.example')).status, 303, 'and stays');

  const removed = await owner.request(`/dashboard/team/users/${memberId}/remove`, { form: { csrf } });
  t.equal(removed.status, 303);
  t.notOk(await signedIn(member), 'the removed member is signed out');
  t.notMatch((await owner.request('/dashboard/team')).text, memberEmail, 'and no longer listed');
});

t.test('changing one’s password: the current one is checked, other sessions end, this one goes on', async (t) => {
  const { app, tenant, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const email = await addTeamUser(app, tenant.teamId, 'member');
  const [here, there] = [new Browser(issuer), new Browser(issuer)];
  t.equal((await here.signIn(email)).status, 303);
  t.equal((await there.signIn(email)).status, 303);
  const csrf = await csrfOf(here);
  const change = (fields: Record<string, string>) => here.request('/dashboard/password', { form: { csrf, ...fields } });

  const wrong = await change({ current_password: 'not it', new_password: 'a new passphrase', confirm_password: 'a new passphrase' });
  t.equal(wrong.status, 401);
  t.match(wrong.text, /The current password is incorrect/);
  t.equal((await change({ current_password: PASSWORD, new_password: 'a new passphrase', confirm_password: 'another one' })).status, 400, 'the two new ones differ');
  const short = await change({ current_password: PASSWORD, new_password: 'short', confirm_password: 'short' });
  t.equal(short.status, 400);
  t.match(short.text, /at least 8 characters/);
  const blank = await change({ current_password: PASSWORD, new_password: '', confirm_password: '' });
  t.equal(blank.status, 400, 'a blank new password is refused, not taken as "no sign-in"');
  t.equal((await new Browser(issuer).signIn(email)).status, 303, 'the password still signs in');
  t.ok(await signedIn(there), 'nothing changed so far');

  const done = await change({ current_password: PASSWORD, new_password: 'a new passphrase', confirm_password: 'a new passphrase' });
  t.equal(done.status, 303);
  t.equal(done.location, '/dashboard/team?password=changed');
  const after = await here.request(done.location!);
  t.equal(after.status, 200, 'this browser goes on, in a new session');
  t.match(after.text, /Your password was changed/);
  t.notOk(await signedIn(there), 'the other browser is signed out');
  t.equal((await new Browser(issuer).signIn(email)).status, 401, 'the old password is refused');
  t.equal((await new Browser(issuer).signIn(email, 'a new passphrase')).status, 303, 'the new one signs in');
});

t.test('wrong current passwords are limited per session: a stolen cookie cannot guess the password, nor stop its owner', async (t) => {
  const { app, tenant, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const email = await addTeamUser(app, tenant.teamId, 'member');
  const thief = new Browser(issuer);
  t.equal((await thief.signIn(email)).status, 303);
  const csrf = await csrfOf(thief);
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    statuses.push((await thief.request('/dashboard/password', { form: { csrf, current_password: `guess ${i}`, new_password: 'taken over!', confirm_password: 'taken over!' } })).status);
  }
  t.same(statuses, [401, 401, 401, 401, 401, 429]);
  const right = await thief.request('/dashboard/password', { form: { csrf, current_password: PASSWORD, new_password: 'taken over!', confirm_password: 'taken over!' } });
  t.equal(right.status, 429, 'the right one too, for the window');
  t.ok(right.headers.get('retry-after'));
  t.equal((await new Browser(issuer).signIn(email)).status, 303, 'the password is unchanged');
  const own = new Browser(issuer);
  t.equal((await own.signIn(email)).status, 303);
  const mine = await own.request('/dashboard/password', { form: { csrf: await csrfOf(own), current_password: PASSWORD, new_password: 'mine again!', confirm_password: 'mine again!' } });
  t.equal(mine.status, 303, "the person's own session still changes it");
  t.notOk((await thief.request('/dashboard')).status === 200, 'and the thief is signed out by it');
});

t.test('an owner adds a person, who signs in with the first password shown once and replaces it', async (t) => {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  await createTenant(app.services, { email: 'someone@other.example', password: PASSWORD });
  const owner = new Browser(issuer);
  t.equal((await owner.signIn(ownerEmail)).status, 303);
  const csrf = await csrfOf(owner);
  const added = await owner.request('/dashboard/team/users', { form: { csrf, email: 'New.Person@Example.test', role: 'admin' } });
  t.equal(added.status, 201);
  t.equal(added.headers.get('cache-control'), 'no-store', 'the page with the password is not kept');
  const password = /id="first_password">([^<]+)</.exec(added.text)?.[1];
  t.match(password, /^[A-Za-z0-9_-]{20}$/, 'a first password, made by the service');
  t.match(added.text, /new\.person@example\.test is in the team as admin/);
  const events = await app.services.events.readStream(`team-${tenant.teamId}`);
  t.match(events.at(-1), { type: 'UserAdded', data: { email: 'new.person@example.test', role: 'admin' }, metadata: { actorKind: 'dashboard_user' } });
  t.notOk(JSON.stringify(events.map((e) => e.data)).includes(password!), 'only its hash is stored');

  const person = new Browser(issuer);
  t.equal((await person.signIn('new.person@example.test', password!)).status, 303, 'they sign in with it');
  const changed = await person.request('/dashboard/password', { form: { csrf: await csrfOf(person), current_password: password!, new_password: 'their own passphrase', confirm_password: 'their own passphrase' } });
  t.equal(changed.status, 303, 'and replace it');

  const again = await owner.request('/dashboard/team/users', { form: { csrf, email: 'new.person@example.test', role: 'member' } });
  t.equal(again.status, 409, 'an address already in use');
  t.match(again.text, /This address cannot be added: it signs in a user already/);
  const elsewhere = await owner.request('/dashboard/team/users', { form: { csrf, email: 'someone@other.example', role: 'member' } });
  t.equal(elsewhere.status, 409, "another team's address: the same answer");
  t.equal(elsewhere.text.match(/<p class="error"[^>]*>[^<]*</)?.[0], again.text.match(/<p class="error"[^>]*>[^<]*</)?.[0], 'word for word');
  t.equal((await owner.request('/dashboard/team/users', { form: { csrf, email: 'not an address', role: 'member' } })).status, 400);
  t.equal((await owner.request('/dashboard/team/users', { form: { csrf, email: 'exists@localhost', role: 'member' } })).status, 400, 'a bad address whose text says "exists" is still a bad address');
  t.equal((await owner.request('/dashboard/team/users', { form: { csrf, email: 'x@example.test', role: 'king' } })).status, 400);

  const adminBrowser = new Browser(issuer);
  t.equal((await adminBrowser.signIn('new.person@example.test', 'their own passphrase')).status, 303);
  const byAdmin = await adminBrowser.request('/dashboard/team/users', { form: { csrf: await csrfOf(adminBrowser), email: 'y@example.test', role: 'owner' } });
  t.equal(byAdmin.status, 403, 'an admin cannot add people (nor make an owner)');
  t.notMatch((await adminBrowser.request('/dashboard/team')).text, /Add a person/, 'and has no form for it');
});
