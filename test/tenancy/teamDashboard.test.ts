import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { findInvitationByCodeHash } from '../../src/readModels/teamInvitations.ts';
import { startSmtpSink } from '../agent/smtpSink.ts';
import { findUserByEmail } from '../../src/readModels/users.ts';
import { TestClock, createTenant } from '../helpers/testApp.ts';
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
  t.match(byAdmin.text, /Only the team&#39;s owners remove people. You are an admin\./);
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

/** Joins with the code on `browser` (the join page's own form, its CSRF cookie). */
async function join(browser: Browser, code: string, password = 'their own passphrase', confirm = password) {
  const form = formFields((await browser.request('/dashboard/join')).text, '/dashboard/join');
  return browser.request('/dashboard/join', { form: { csrf: form.csrf!, code, new_password: password, confirm_password: confirm } });
}

/** The service, mailing through a real SMTP sink on loopback. */
async function withMailSink(t: Test, options: { clock?: TestClock } = {}) {
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const started = await startOAuthApp({ ...options, env: { OUTBOUND_SMTP_URL: sink.url } });
  t.teardown(() => started.app.close());
  /** The code in the last invitation mailed to `email`. */
  const codeFor = (email: string) => {
    const mail = sink.received.findLast((m) => m.rcptTo.includes(email));
    return mail ? /svc_inv_\S+/.exec(mail.parsed.text ?? '')?.[0] : undefined;
  };
  return { ...started, sink, codeFor };
}

t.test('an owner invites a person, who joins with the code mailed to them and a password of their own', async (t) => {
  const { app, tenant, ownerEmail, issuer, sink, codeFor } = await withMailSink(t);
  const owner = new Browser(issuer);
  t.equal((await owner.signIn(ownerEmail)).status, 303);
  const csrf = await csrfOf(owner);
  const invited = await owner.request('/dashboard/team/invitations', { form: { csrf, email: 'New.Person@Example.test', role: 'admin' } });
  t.equal(invited.status, 201);
  t.match(invited.text, /An invitation was mailed to new\.person@example\.test, as admin/);
  const code = codeFor('new.person@example.test');
  t.match(code, /^svc_inv_[A-Za-z0-9_-]{43}$/, 'a code made by the service, mailed to the address');
  t.notOk(invited.text.includes(code!), 'and never shown to the owner');
  t.match(sink.received.at(-1)!.parsed, { subject: 'You are invited to join Team', text: new RegExp(`${issuer}/dashboard/join`) });
  t.notOk(await findUserByEmail(app.services.readModels, 'new.person@example.test'), 'nobody is added, no address claimed, until the person joins');
  const events = await app.services.events.readStream(`team-${tenant.teamId}`);
  t.match(events.at(-1), { type: 'UserInvited', data: { email: 'new.person@example.test', role: 'admin', invitedBy: tenant.ownerUserId }, metadata: { actorKind: 'dashboard_user' } });
  t.notOk(JSON.stringify(events.map((e) => e.data)).includes(code!), 'only its hash is stored');
  t.match((await owner.request('/dashboard/team')).text, /Cancel invitation of new\.person@example\.test/, 'the owner sees it open');

  const stranger = new Browser(issuer);
  const wrong = await join(stranger, `${code!.slice(0, -4)}AAAA`);
  t.equal(wrong.status, 400, 'a wrong code');
  t.match(wrong.text, /invitation code is not valid/);
  t.equal((await join(stranger, 'not a code')).status, 400);
  t.equal((await join(stranger, code!, 'short')).status, 400, 'a password too short');
  t.equal((await join(stranger, code!, 'their own passphrase', 'another one')).status, 400, 'two passwords that differ');
  const noCsrf = await stranger.request('/dashboard/join', { form: { csrf: 'forged', code: code!, new_password: 'their own passphrase', confirm_password: 'their own passphrase' } });
  t.equal(noCsrf.status, 403, 'a form without its CSRF cookie');

  const person = new Browser(issuer);
  const joined = await join(person, `  ${code!}\n`);
  t.equal(joined.status, 303, 'the person joins (a pasted code with spaces around it)');
  t.equal(joined.headers.get('location'), '/dashboard/team?joined=1');
  t.match((await person.request('/dashboard/team?joined=1')).text, /you joined the team/, 'signed in at once');
  t.match(await findUserByEmail(app.services.readModels, 'new.person@example.test'), { teamId: tenant.teamId, role: 'admin' });
  t.match((await app.services.events.readStream(`team-${tenant.teamId}`)).slice(-2), [{ type: 'InvitationAccepted' }, { type: 'UserAdded', data: { email: 'new.person@example.test', role: 'admin' } }]);
  t.equal((await join(new Browser(issuer), code!)).status, 400, 'the code is used up');
  t.equal((await new Browser(issuer).signIn('new.person@example.test', 'their own passphrase')).status, 303, 'they sign in with their password');
  t.notMatch((await owner.request('/dashboard/team')).text, /Cancel invitation of/, 'no open invitation any more');

  const again = await owner.request('/dashboard/team/invitations', { form: { csrf, email: 'new.person@example.test', role: 'member' } });
  t.equal(again.status, 400, "an address of the team's own people");
  t.match(again.text, /already exists in the team/);
  t.equal((await owner.request('/dashboard/team/invitations', { form: { csrf, email: 'not an address', role: 'member' } })).status, 400);
  t.equal((await owner.request('/dashboard/team/invitations', { form: { csrf, email: 'x@example.test', role: 'king' } })).status, 400);

  const byAdmin = await person.request('/dashboard/team/invitations', { form: { csrf: await csrfOf(person), email: 'y@example.test', role: 'owner' } });
  t.equal(byAdmin.status, 403, 'an admin cannot invite people (nor make an owner)');
  t.notMatch((await person.request('/dashboard/team')).text, /Invite a person/, 'and has no form for it');
});

t.test("an invitation claims nothing: an address of another team's gets its mail, and only the address's holder learns it is taken", async (t) => {
  const { app, ownerEmail, issuer, codeFor } = await withMailSink(t);
  const other = await createTenant(app.services, { email: 'someone@other.example', password: PASSWORD });
  const owner = new Browser(issuer);
  t.equal((await owner.signIn(ownerEmail)).status, 303);
  const csrf = await csrfOf(owner);
  const invited = await owner.request('/dashboard/team/invitations', { form: { csrf, email: 'someone@other.example', role: 'member' } });
  t.equal(invited.status, 201, 'the owner learns nothing of the address');
  const taken = await join(new Browser(issuer), codeFor('someone@other.example')!);
  t.equal(taken.status, 409, 'the person joining is told their address signs in already');
  t.match(taken.text, /Your address signs in to a team here already/);
  t.match(await findUserByEmail(app.services.readModels, 'someone@other.example'), { teamId: other.teamId }, 'and it stays where it was');

  // Someone the owner would have squatted on before: their address is still free for their own team.
  t.equal((await owner.request('/dashboard/team/invitations', { form: { csrf, email: 'free@example.test', role: 'member' } })).status, 201);
  const elsewhere = await createTenant(app.services, { email: 'free@example.test', password: PASSWORD });
  t.ok(elsewhere.teamId, 'an open invitation does not keep the address from being used elsewhere');
  t.equal((await join(new Browser(issuer), codeFor('free@example.test')!)).status, 409);
});

t.test('an owner cancels an invitation, or replaces it by inviting again; an expired one is refused', async (t) => {
  const clock = new TestClock(new Date());
  const { app, tenant, ownerEmail, issuer, sink, codeFor } = await withMailSink(t, { clock });
  const owner = new Browser(issuer);
  t.equal((await owner.signIn(ownerEmail)).status, 303);
  const csrf = await csrfOf(owner);
  const invite = async (email: string) => {
    t.equal((await owner.request('/dashboard/team/invitations', { form: { csrf, email, role: 'member' } })).status, 201);
    return codeFor(email)!;
  };
  const first = await invite('a@example.test');
  const second = await invite('a@example.test');
  t.not(first, second);
  t.equal((await join(new Browser(issuer), first)).status, 400, 'the replaced code is refused');
  const cancelled = await invite('b@example.test');
  const idOf = async (code: string) => (await findInvitationByCodeHash(app.services.readModels, createHash('sha256').update(code).digest('hex')))!.id;
  const invitationId = await idOf(cancelled);
  t.equal((await owner.request(`/dashboard/team/invitations/${invitationId}/cancel`, { form: { csrf } })).status, 303);
  t.equal((await join(new Browser(issuer), cancelled)).status, 400, 'the cancelled code is refused');
  t.equal((await owner.request(`/dashboard/team/invitations/${invitationId}/cancel`, { form: { csrf } })).status, 404, 'cancelling it again');
  await createTenant(app.services, { email: 'other-owner@example.test', password: PASSWORD });
  const otherOwner = new Browser(issuer);
  t.equal((await otherOwner.signIn('other-owner@example.test')).status, 303);
  const openId = await idOf(second);
  t.equal((await otherOwner.request(`/dashboard/team/invitations/${openId}/cancel`, { form: { csrf: await csrfOf(otherOwner) } })).status, 404, "another team's invitation is a missing one");

  clock.advance(7 * 24 * 3600_000 + 1);
  t.equal((await join(new Browser(issuer), second)).status, 400, 'an expired code is refused');
  const later = new Browser(issuer);
  t.equal((await later.signIn(ownerEmail)).status, 303);
  t.match((await later.request('/dashboard/team')).text, /<td>expired<\/td>/, 'the owner sees it lapsed');
  t.match((await app.services.events.readStream(`team-${tenant.teamId}`)).map((e) => e.type), ['TeamCreated', 'UserAdded', 'UserInvited', 'UserInvited', 'InvitationCancelled', 'UserInvited', 'InvitationCancelled']);

  // A mail that cannot be sent: the invitation is withdrawn, nobody holds a working code.
  sink.behaviour.rcpt = (address) => (address === 'c@example.test' ? { code: 550, message: '5.1.1 no such user' } : null);
  const failed = await later.request('/dashboard/team/invitations', { form: { csrf: await csrfOf(later), email: 'c@example.test', role: 'member' } });
  t.equal(failed.status, 503);
  t.match(failed.text, /could not be sent, so the invitation was withdrawn/);
  t.match((await app.services.events.readStream(`team-${tenant.teamId}`)).slice(-2).map((e) => e.type), ['UserInvited', 'InvitationCancelled']);
  // (Not /c@example.test/ alone: the owner's random address may end in "c".)
  t.notMatch((await later.request('/dashboard/team')).text, /Cancel invitation of c@example\.test/, 'not listed as open');

  // A new invitation whose mail fails leaves the one mailed before to the same address working.
  sink.behaviour.rcpt = undefined;
  t.equal((await later.request('/dashboard/team/invitations', { form: { csrf: await csrfOf(later), email: 'd@example.test', role: 'member' } })).status, 201);
  const delivered = codeFor('d@example.test')!;
  sink.behaviour.rcpt = (address) => (address === 'd@example.test' ? { code: 451, message: '4.3.0 try later' } : null);
  t.equal((await later.request('/dashboard/team/invitations', { form: { csrf: await csrfOf(later), email: 'd@example.test', role: 'admin' } })).status, 503);
  t.equal((await join(new Browser(issuer), delivered)).status, 303, 'the code delivered before still joins');
});

t.test('a team sends at most 20 invitation mails an hour', async (t) => {
  const { ownerEmail, issuer, sink } = await withMailSink(t);
  const owner = new Browser(issuer);
  t.equal((await owner.signIn(ownerEmail)).status, 303);
  const csrf = await csrfOf(owner);
  for (let i = 0; i < 3; i++) t.equal((await owner.request('/dashboard/team/invitations', { form: { csrf, email: ownerEmail, role: 'member' } })).status, 400, 'refused before any mail: not counted');
  for (let i = 0; i < 20; i++) t.equal((await owner.request('/dashboard/team/invitations', { form: { csrf, email: `p${i}@example.test`, role: 'member' } })).status, 201);
  const refused = await owner.request('/dashboard/team/invitations', { form: { csrf, email: 'p20@example.test', role: 'member' } });
  t.equal(refused.status, 429);
  t.match(refused.text, /sent 20 invitations in the last hour/);
  t.ok(Number(refused.headers.get('retry-after')) > 0);
  t.equal(sink.received.length, 20, 'no 21st mail');
});

t.test('a client sending wrong invitation codes is slowed down', async (t) => {
  const { issuer } = await withMailSink(t);
  const stranger = new Browser(issuer);
  const bad = `svc_inv_${'A'.repeat(43)}`;
  for (let i = 0; i < 20; i++) t.equal((await join(stranger, bad)).status, 400);
  const refused = await join(stranger, bad);
  t.equal(refused.status, 429, 'the 21st wrong code in 15 minutes');
  t.ok(Number(refused.headers.get('retry-after')) > 0);
});
