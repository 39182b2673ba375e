import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { eventsOfTypes } from '../../src/lib/eventsOfTypes.ts';
import { registerOAuthClientDynamically, revokeGrant } from '../../src/commands/oauth.ts';
import { DEPARTED_APPS } from '../../src/processors/webhookDelivery/departedApps.ts';
import { startWebhookWorker } from '../../src/processors/webhookDelivery/startWorker.ts';
import { addUser } from '../../src/commands/tenancy.ts';
import { changeUserPassword, changeUserRole, removeUser, removedUserOf, signOutEverywhere, sweepRemovedUser } from '../../src/commands/teamUsers.ts';
import { TenancyError } from '../../src/commands/tenancy.ts';
import { passwordStamp, sessionStampOf } from '../../src/commands/credentials.ts';
import { startDashboardSession } from '../../src/commands/dashboardSessions.ts';
import { holdingsOfUser } from '../../src/readModels/userHoldings.ts';
import { findUserByEmail, listUsersOfTeam } from '../../src/readModels/users.ts';
import type { TestApp, Tenant } from '../helpers/testApp.ts';
import { createTenant } from '../helpers/testApp.ts';
import { Browser, PASSWORD, addTeamUser, formFields, obtainCode, startOAuthApp, tokenRequest } from '../oauth/helpers.ts';

/**
 * From a dashboard security audit: nothing removed a user, changed a role or a password, or ended a
 * user's other sessions, so a departing admin kept the dashboard, the apps they had connected kept
 * the team's data flowing to them, and a leaked password or cookie could not be cut off.
 */

/** An app (a new one, or `client` again) connected by the user signed in on `browser`: its tokens, calls with the access token. */
async function connectApp(app: TestApp, issuer: string, tenant: Tenant, browser: Browser, existing?: { clientId: string }) {
  let client = existing;
  if (!client) {
    const registered = await registerOAuthClientDynamically(app.services, { name: 'Laptop MCP client', redirectUris: ['https://app.example.test/callback'], clientUri: null });
    await app.services.projections.waitFor(registered.position!, 5_000);
    client = registered;
  }
  const { code, verifier, redirectUri } = await obtainCode(browser, issuer, client, [tenant.siteId]);
  const tokens = await tokenRequest(issuer, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client.clientId });
  if (tokens.status !== 200) throw new Error(`token exchange: ${tokens.status}`);
  const access = String(tokens.json.access_token);
  const refreshToken = String(tokens.json.refresh_token);
  return {
    clientId: client.clientId,
    refreshToken,
    grantId: /^svc_ort_([0-9A-Z]{26})\./.exec(refreshToken)![1]!,
    list: async () => (await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, { headers: { authorization: `Bearer ${access}` } })).status,
    subscribe: async () => {
      const res = await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'the app', url: 'https://hooks.example.com/in', eventTypes: ['outreach.reply_sent'] }),
      });
      if (res.status !== 201) throw new Error(`subscription: ${res.status}`);
      return ((await res.json()) as { subscription: { id: string } }).subscription.id;
    },
    refresh: async () => (await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: String(tokens.json.refresh_token), client_id: client.clientId })).status,
  };
}

/** The service with a team whose admin is signed in on `browser` and has connected an app. */
async function adminWithApp(t: Test) {
  const started = await startOAuthApp();
  t.teardown(() => started.app.close());
  const { app, tenant, issuer } = started;
  const adminEmail = await addTeamUser(app, tenant.teamId, 'admin');
  const browser = new Browser(issuer);
  t.equal((await browser.signIn(adminEmail)).status, 303);
  return { ...started, adminEmail, browser, connected: await connectApp(app, issuer, tenant, browser) };
}

const signedIn = async (browser: Browser) => (await browser.request('/dashboard')).status === 200;

async function userNamed(app: TestApp, email: string) {
  const user = await findUserByEmail(app.services.readModels, email);
  if (!user) throw new Error(`no user ${email}`);
  return user;
}

const settle = (app: TestApp, position: bigint | null) => (position === null ? undefined : app.services.projections.waitFor(position, 5_000));

t.test('a removed user is signed out everywhere, the apps they connected are cut off, and their address is free again', async (t) => {
  const { app, tenant, issuer, ownerEmail } = await startOAuthApp();
  t.teardown(() => app.close());
  const adminEmail = await addTeamUser(app, tenant.teamId, 'admin');
  const [laptop, phone] = [new Browser(issuer), new Browser(issuer)];
  t.equal((await laptop.signIn(adminEmail)).status, 303);
  t.equal((await phone.signIn(adminEmail)).status, 303);
  const connected = await connectApp(app, issuer, tenant, laptop);
  t.equal(await connected.list(), 200, 'the app the admin connected reads the team');
  const subscriptionId = await connected.subscribe();
  const ownerBrowser = new Browser(issuer);
  t.equal((await ownerBrowser.signIn(ownerEmail)).status, 303);
  // Another app, connected by both: it goes on for the owner, and so do its subscriptions.
  const shared = await connectApp(app, issuer, tenant, laptop);
  const alsoByOwner = await connectApp(app, issuer, tenant, ownerBrowser, { clientId: shared.clientId });
  const viaShared = await shared.subscribe();
  const keptId = await alsoByOwner.subscribe();

  const admin = await userNamed(app, adminEmail);
  const holdings = await holdingsOfUser(app.services, admin, app.services.clock.now());
  t.equal(holdings.sessionIds.length, 2, 'two browsers');
  t.equal(holdings.grantIds.length, 2, 'two apps');
  t.same(holdings.subscriptions.map((s) => s.id).sort(), [subscriptionId, viaShared].sort(), "the subscriptions made with the admin's tokens, the shared app's too; not the one made with the owner's");
  const r = await removeUser(app.services, { teamId: tenant.teamId, userId: admin.id }, holdings);
  await settle(app, r.position);

  t.notOk(await signedIn(laptop), 'the laptop is signed out');
  t.notOk(await signedIn(phone), 'the phone is signed out');
  for (const sessionId of holdings.sessionIds) {
    t.match((await app.services.events.readStream(`dashboard_session-${sessionId}`)).at(-1), { type: 'DashboardSessionEnded' }, 'each session ended, on the record');
  }
  t.equal(await connected.list(), 401, "the app's access token stops working");
  t.equal(await connected.refresh(), 400, 'its refresh token is refused');
  t.equal((await new Browser(issuer).signIn(adminEmail)).status, 401, 'the password no longer signs in');
  t.same((await listUsersOfTeam(app.services.readModels, tenant.teamId)).map((u) => u.email).includes(adminEmail), false, 'not listed');
  const revoked = (await app.services.events.readStream(`oauth_grant-${holdings.grantIds[0]}`)).at(-1)!;
  t.match(revoked, { type: 'GrantRevoked', data: { reason: 'user_removed' } }, 'the log says why the app was cut off');
  t.match(
    (await app.services.events.readStream(`webhook_subscription-${subscriptionId}`)).at(-1),
    { type: 'SubscriptionDeleted', metadata: { cause: { reason: 'user_removed', userId: admin.id } } },
    "the app's webhook subscription is deleted: nothing flows to it any more; the log says why",
  );
  t.equal(await shared.list(), 401, "the admin's own connection to the shared app is cut off");
  t.equal(await alsoByOwner.list(), 200, "the owner's connection to it goes on");
  t.match((await app.services.events.readStream(`webhook_subscription-${viaShared}`)).at(-1), { type: 'SubscriptionDeleted' }, 'what the admin subscribed through it is deleted');
  t.notMatch((await app.services.events.readStream(`webhook_subscription-${keptId}`)).at(-1), { type: 'SubscriptionDeleted' }, "what the owner's connection subscribed stays");

  const other = await createTenant(app.services);
  const again = await addUser(app.services, { teamId: other.teamId, email: adminEmail, role: 'member', password: PASSWORD });
  t.ok(again.userId, 'the address can be added again, here to another team');
});

t.test("an app the sweep missed is refused and revoked at its next use: a consent given meanwhile, a code not redeemed yet", async (t) => {
  const { app, tenant, issuer, ownerEmail, adminEmail, browser, connected } = await adminWithApp(t);
  const pending = await registerOAuthClientDynamically(app.services, { name: 'Pending client', redirectUris: ['https://app.example.test/callback'], clientUri: null });
  await app.services.projections.waitFor(pending.position!, 5_000);
  const code = await obtainCode(browser, issuer, pending, [tenant.siteId]);

  const admin = await userNamed(app, adminEmail);
  // The sweep is given nothing, as when the grants were read before these consents reached the read models.
  const r = await removeUser(app.services, { teamId: tenant.teamId, userId: admin.id }, { sessionIds: [], grantIds: [], subscriptions: [] });
  await settle(app, r.position);
  const byOther = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: connected.refreshToken, client_id: pending.clientId });
  t.equal(byOther.status, 400, "another client presenting the app's refresh token");
  t.notMatch(byOther.json, { error_description: /no longer in the team/ }, 'learns nothing of the team');
  t.notMatch((await app.services.events.readStream(`oauth_grant-${connected.grantId}`)).at(-1), { data: { reason: 'user_removed' } }, 'and revokes nothing for that reason');
  const refreshed = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: connected.refreshToken, client_id: connected.clientId });
  t.equal(refreshed.status, 400);
  t.match(refreshed.json, { error: 'invalid_grant', error_description: /no longer in the team/ });
  t.match((await app.services.events.readStream(`oauth_grant-${connected.grantId}`)).at(-1), { type: 'GrantRevoked', data: { reason: 'user_removed' } }, 'and the grant is revoked then');
  t.equal(await connected.list(), 401, 'the access token is refused');
  const redeemed = await tokenRequest(issuer, { grant_type: 'authorization_code', code: code.code, code_verifier: code.verifier, redirect_uri: code.redirectUri, client_id: pending.clientId });
  t.equal(redeemed.status, 400, 'a code given before the removal is not redeemed after it');
  t.equal(redeemed.json.error, 'invalid_grant');
});

t.test("what an app the sweep missed subscribed is deleted at its next use: at the token endpoint, or at a bearer call", async (t) => {
  const { app, tenant, issuer, adminEmail, browser, connected } = await adminWithApp(t);
  const refreshing = await connected.subscribe();
  const calling = await connectApp(app, issuer, tenant, browser);
  const callingSubscription = await calling.subscribe();
  const lastOf = async (stream: string) => (await app.services.events.readStream(stream)).at(-1);

  const admin = await userNamed(app, adminEmail);
  // As when the grants were read before the consents reached the read models.
  const r = await removeUser(app.services, { teamId: tenant.teamId, userId: admin.id }, { sessionIds: [], grantIds: [], subscriptions: [] });
  await settle(app, r.position);
  t.notMatch(await lastOf(`webhook_subscription-${refreshing}`), { type: 'SubscriptionDeleted' }, 'the sweep missed both apps');

  t.equal(await connected.refresh(), 400, 'the refresh is refused');
  t.match(await lastOf(`oauth_grant-${connected.grantId}`), { type: 'GrantRevoked', data: { reason: 'user_removed' } });
  t.match(
    await lastOf(`webhook_subscription-${refreshing}`),
    { type: 'SubscriptionDeleted', metadata: { cause: { reason: 'user_removed', grantId: connected.grantId } } },
    'and by the answer, what the app subscribed is deleted (and why)',
  );

  t.equal(await calling.list(), 401, 'an app that only calls with its access token is refused');
  t.match(await lastOf(`oauth_grant-${calling.grantId}`), { type: 'GrantRevoked', data: { reason: 'user_removed' } }, 'its grant is revoked then, on the record');
  t.match(
    await lastOf(`webhook_subscription-${callingSubscription}`),
    { type: 'SubscriptionDeleted', metadata: { cause: { reason: 'user_removed', grantId: calling.grantId } } },
    'and what it subscribed is deleted (and why)',
  );
  const revocations = async () => (await app.services.events.readStream(`oauth_grant-${calling.grantId}`)).filter((e) => e.type === 'GrantRevoked').length;
  t.equal(await calling.list(), 401, 'its next call is refused too');
  t.equal(await revocations(), 1, 'without revoking it again');
});

t.test("what a disconnection cut short left is done by the webhook worker from the log: the departed person's grants revoked, the apps' subscriptions deleted", async (t) => {
  const { app, tenant, issuer, ownerEmail, adminEmail, browser, connected } = await adminWithApp(t);
  const removedAdminsApp = await connected.subscribe();
  const selfRevoking = await connectApp(app, issuer, tenant, browser);
  const selfRevokingApp = await selfRevoking.subscribe();
  const owner = new Browser(issuer);
  t.equal((await owner.signIn(ownerEmail)).status, 303);
  const revokedByTeam = await connectApp(app, issuer, tenant, owner);
  const revokedByTeamsApp = await revokedByTeam.subscribe();
  const kept = await connectApp(app, issuer, tenant, owner);
  const keptApp = await kept.subscribe();
  const lastOf = async (stream: string) => (await app.services.events.readStream(stream)).at(-1);
  // The worker ran before (its checkpoint is stored), and is down while the process crashes.
  await (await startWebhookWorker(app.services, undefined, { workerId: 'departed-apps-test' })).stop();
  t.ok(await app.services.readModels.getCheckpoint(DEPARTED_APPS), 'its first start stored a checkpoint');

  // Each disconnection as a crash right after its first append would leave it: the removal (no sweep),
  // and a team's revocation of an app (no deletion of its subscriptions).
  const admin = await userNamed(app, adminEmail);
  await settle(app, (await removeUser(app.services, { teamId: tenant.teamId, userId: admin.id }, { sessionIds: [], grantIds: [], subscriptions: [] })).position);
  await settle(app, (await revokeGrant(app.services, revokedByTeam.grantId, 'revoked_by_team')).position);
  // The removed admin's other app revokes its own tokens meanwhile: no revocation of the removal's comes for it.
  await settle(app, (await revokeGrant(app.services, selfRevoking.grantId, 'revoked_by_client')).position);
  t.notMatch(await lastOf(`oauth_grant-${connected.grantId}`), { type: 'GrantRevoked' }, "the removed admin's grant still stands");
  t.notMatch(await lastOf(`webhook_subscription-${removedAdminsApp}`), { type: 'SubscriptionDeleted' });
  t.notMatch(await lastOf(`webhook_subscription-${revokedByTeamsApp}`), { type: 'SubscriptionDeleted' });

  const worker = await startWebhookWorker(app.services, undefined, { workerId: 'departed-apps-test' });
  let stopped = false;
  const stop = async () => {
    if (!stopped) await worker.stop();
    stopped = true;
  };
  t.teardown(stop);
  const deleted = async (id: string) => (await lastOf(`webhook_subscription-${id}`))?.type === 'SubscriptionDeleted';
  const deadline = Date.now() + 10_000;
  const all = async () => (await deleted(removedAdminsApp)) && (await deleted(revokedByTeamsApp)) && (await deleted(selfRevokingApp));
  while (!(await all()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.ok(await deleted(removedAdminsApp), "the removed admin's app's subscription is deleted");
  t.ok(await deleted(revokedByTeamsApp), "the revoked app's subscription is deleted");
  t.ok(await deleted(selfRevokingApp), "so is that of the removed admin's app that revoked its own tokens");
  t.match((await lastOf(`webhook_subscription-${removedAdminsApp}`))?.metadata, { cause: { reason: 'user_removed', userId: admin.id } }, 'why, on the record');
  t.match((await lastOf(`webhook_subscription-${revokedByTeamsApp}`))?.metadata, { cause: { reason: 'revoked_by_team', grantId: revokedByTeam.grantId } });
  t.notOk('actor' in ((await lastOf(`webhook_subscription-${revokedByTeamsApp}`))?.metadata ?? {}), "the worker's own deletion names no actor");
  t.match(await lastOf(`oauth_grant-${connected.grantId}`), { type: 'GrantRevoked', data: { reason: 'user_removed' } }, 'and the grant is revoked');
  t.equal(await connected.list(), 401);
  t.notMatch(await lastOf(`webhook_subscription-${keptApp}`), { type: 'SubscriptionDeleted' }, 'an app the owner still stands behind keeps its subscription');
  t.equal(await kept.list(), 200);

  // Its checkpoint is stored: started again, it does nothing twice.
  await stop();
  const head = await app.services.events.headPosition();
  const revocation = (await app.services.events.readStream(`oauth_grant-${connected.grantId}`)).at(-1)!.position;
  t.ok((await app.services.readModels.getCheckpoint(DEPARTED_APPS))!.position >= revocation, 'its checkpoint passed the events it handled');
  const again = await startWebhookWorker(app.services, undefined, { workerId: 'departed-apps-test' });
  await again.stop();
  t.equal(await app.services.events.headPosition(), head, 'started again, it appends nothing');
});

t.test('a sign-in whose password check began before the change does not outlive it', async (t) => {
  const { app, tenant, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const email = await addTeamUser(app, tenant.teamId, 'member');
  const user = await userNamed(app, email);
  const r = await changeUserPassword(app.services, { teamId: tenant.teamId, userId: user.id, password: 'a brand new passphrase' }, { sessionIds: [] });
  await settle(app, r.position);
  // What such a sign-in records: the session, stamped with the password it checked (the old one).
  const late = await startDashboardSession(app.services, { userId: user.id, teamId: tenant.teamId, credential: passwordStamp(user.passwordHash)! });
  await settle(app, late.position);
  const res = await fetch(`${issuer}/dashboard`, { headers: { cookie: `svc_session=${late.token}` }, redirect: 'manual' });
  t.equal(res.status, 303, 'signed out: the session was signed in with a password the user no longer has');
  const current = await startDashboardSession(app.services, { userId: user.id, teamId: tenant.teamId, credential: r.credential! });
  await settle(app, current.position);
  t.equal((await fetch(`${issuer}/dashboard`, { headers: { cookie: `svc_session=${current.token}` }, redirect: 'manual' })).status, 200, 'one with the new password holds');
});

t.test('removing a user removed already runs the sweep again: what the first one missed goes', async (t) => {
  const { app, tenant, issuer, ownerEmail } = await startOAuthApp();
  t.teardown(() => app.close());
  const adminEmail = await addTeamUser(app, tenant.teamId, 'admin');
  const browser = new Browser(issuer);
  t.equal((await browser.signIn(adminEmail)).status, 303);
  const connected = await connectApp(app, issuer, tenant, browser);
  const subscriptionId = await connected.subscribe();
  const admin = await userNamed(app, adminEmail);
  // A sweep that saw nothing (cut short, or run before these reached the read models).
  await settle(app, (await removeUser(app.services, { teamId: tenant.teamId, userId: admin.id }, { sessionIds: [], grantIds: [], subscriptions: [] })).position);
  // The app is not used meanwhile (its next use would disconnect it: the test above).
  t.notMatch((await app.services.events.readStream(`webhook_subscription-${subscriptionId}`)).at(-1), { type: 'SubscriptionDeleted' }, 'the subscription is still there');
  const owner = new Browser(issuer);
  t.equal((await owner.signIn(ownerEmail)).status, 303);
  t.match((await owner.request('/dashboard/oauth-apps')).text, /no longer an owner or admin of the team: the app(&#39;|')s access is refused/, 'Connected apps says so');

  t.same(await removedUserOf(app.services, tenant.teamId, adminEmail), { userId: admin.id, email: adminEmail }, 'found among the removed, by email');
  const again = await holdingsOfUser(app.services, { id: admin.id, teamId: tenant.teamId }, app.services.clock.now());
  await settle(app, await sweepRemovedUser(app.services, { teamId: tenant.teamId, userId: admin.id, email: adminEmail }, again));
  t.match((await app.services.events.readStream(`webhook_subscription-${subscriptionId}`)).at(-1), { type: 'SubscriptionDeleted' }, 'the second sweep deletes it');
  t.match((await app.services.events.readStream(`oauth_grant-${connected.grantId}`)).at(-1), { type: 'GrantRevoked', data: { reason: 'user_removed' } }, 'and revokes the grant');
  t.equal(await connected.list(), 401, 'the token is refused');
});

t.test('a removal cut short before the address was freed: run again, it frees it', async (t) => {
  const { app, tenant } = await startOAuthApp();
  t.teardown(() => app.close());
  const email = await addTeamUser(app, tenant.teamId, 'member');
  const user = await userNamed(app, email);
  // What a process that died right after the team's event leaves: UserRemoved, the address still claimed.
  const team = await app.services.events.readStream(`team-${tenant.teamId}`);
  await settle(app, (await app.services.events.append(`team-${tenant.teamId}`, [{ type: 'UserRemoved', data: { teamId: tenant.teamId, userId: user.id, email, removedAt: new Date().toISOString() } }], team.at(-1)!.revision)).position);
  const other = await createTenant(app.services);
  await t.rejects(addUser(app.services, { teamId: other.teamId, email, role: 'member' }), /exists/, 'the address is still taken');
  const gone = await removedUserOf(app.services, tenant.teamId, user.id);
  t.same(gone, { userId: user.id, email }, 'found among the removed, by id');
  await sweepRemovedUser(app.services, { teamId: tenant.teamId, ...gone! }, await holdingsOfUser(app.services, { id: user.id, teamId: tenant.teamId }, app.services.clock.now()));
  t.ok((await addUser(app.services, { teamId: other.teamId, email, role: 'member' })).userId, 'the sweep run again freed it');
});

t.test('a session that names no password (started before sessions recorded one) is over', async (t) => {
  const { app, tenant, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const token = 'a-session-token-from-an-older-server';
  const started = await app.services.events.append('dashboard_session-LEGACY', [
    {
      type: 'DashboardSessionStarted',
      data: { sessionId: 'LEGACY', sessionHash: createHash('sha256').update(token).digest('hex'), userId: tenant.ownerUserId, teamId: tenant.teamId, expiresAt: new Date(Date.now() + 3600_000).toISOString(), startedAt: new Date().toISOString() },
    },
  ], 'no_stream');
  await settle(app, started.position);
  const res = await fetch(`${issuer}/dashboard`, { headers: { cookie: `svc_session=${token}` }, redirect: 'manual' });
  t.equal(res.status, 303, 'sent to sign in again');
  t.match(res.headers.get('location'), /^\/dashboard\/sign-in/);
});

t.test("the team's last owner cannot be removed or demoted; with a second owner, they can", async (t) => {
  const { app, tenant, ownerEmail } = await startOAuthApp();
  t.teardown(() => app.close());
  const none = { sessionIds: [], grantIds: [], subscriptions: [] };
  await t.rejects(removeUser(app.services, { teamId: tenant.teamId, userId: tenant.ownerUserId }, none), new TenancyError("the team's last owner cannot be removed: make another user owner first"));
  await t.rejects(changeUserRole(app.services, { teamId: tenant.teamId, userId: tenant.ownerUserId, role: 'admin' }, none), /last owner cannot change role/);
  await t.rejects(removeUser(app.services, { teamId: tenant.teamId, userId: 'NOSUCHUSER' }, none), /not a member of this team/);
  const other = await createTenant(app.services);
  await t.rejects(removeUser(app.services, { teamId: other.teamId, userId: tenant.ownerUserId }, none), /not a member of this team/, "another team's user is not this team's to remove");

  const second = await userNamed(app, await addTeamUser(app, tenant.teamId, 'admin'));
  const head = await app.services.events.headPosition();
  const same = await changeUserRole(app.services, { teamId: tenant.teamId, userId: second.id, role: 'admin' }, none);
  t.equal(same.changed, false, 'the same role: nothing recorded');
  t.equal(await app.services.events.headPosition(), head, 'no event appended');
  t.type(same.position, 'bigint', "the answer waits for the team's last event, which a concurrent request may have appended");
  const promoted = await changeUserRole(app.services, { teamId: tenant.teamId, userId: second.id, role: 'owner' }, none);
  t.ok(promoted.changed);
  const demoted = await changeUserRole(app.services, { teamId: tenant.teamId, userId: tenant.ownerUserId, role: 'admin' }, none);
  await settle(app, demoted.position);
  t.same((await listUsersOfTeam(app.services.readModels, tenant.teamId)).map((u) => [u.email, u.role]), [[ownerEmail, 'admin'], [second.email, 'owner']]);
});

t.test('a user made member has the role at their next request, and the apps they connected are disconnected', async (t) => {
  const { app, tenant, issuer, ownerEmail, adminEmail, browser, connected } = await adminWithApp(t);
  t.match((await browser.request('/dashboard/oauth-apps')).text, /Revoke access of/, 'an admin may revoke apps');

  const admin = await userNamed(app, adminEmail);
  const holdings = await holdingsOfUser(app.services, admin, app.services.clock.now());
  const { grantIds } = holdings;
  const r = await changeUserRole(app.services, { teamId: tenant.teamId, userId: admin.id, role: 'member' }, holdings);
  await settle(app, r.position);
  const page = await browser.request('/dashboard');
  t.match(page.text, /\(member\)/, 'still signed in, now as a member');
  t.notMatch((await browser.request('/dashboard/oauth-apps')).text, /Revoke access of/, 'no longer manages apps');
  t.equal(await connected.list(), 401, 'the app a member could not have connected is cut off');
  t.match((await app.services.events.readStream(`oauth_grant-${grantIds[0]}`)).at(-1), { type: 'GrantRevoked', data: { reason: 'user_demoted' } });
});

/** A member signed in on two browsers, and the sessions the read models listed between the two sign-ins (the first only). */
async function twoSessionsOneListed(t: Test) {
  const { app, tenant, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const email = await addTeamUser(app, tenant.teamId, 'member');
  const [listed, unlisted] = [new Browser(issuer), new Browser(issuer)];
  t.equal((await listed.signIn(email)).status, 303);
  const user = await userNamed(app, email);
  const { sessionIds } = await holdingsOfUser(app.services, user, app.services.clock.now());
  t.equal((await unlisted.signIn(email)).status, 303);
  t.equal(sessionIds.length, 1, 'the command is given the one session listed before the second sign-in');
  return { app, tenant, issuer, email, listed, unlisted, user, sessionIds };
}

t.test('a new password ends every session, even one the read models had not listed yet', async (t) => {
  const { app, tenant, issuer, email, listed, unlisted, user, sessionIds } = await twoSessionsOneListed(t);

  const r = await changeUserPassword(app.services, { teamId: tenant.teamId, userId: user.id, password: 'a brand new passphrase' }, { sessionIds });
  await settle(app, r.position);
  t.notOk(await signedIn(listed), 'the listed session ended');
  t.match((await app.services.events.readStream(`dashboard_session-${sessionIds[0]}`)).at(-1), { type: 'DashboardSessionEnded' }, 'its DashboardSessionEnded');
  t.notOk(await signedIn(unlisted), 'the unlisted one started before the change: over too');
  t.equal((await new Browser(issuer).signIn(email)).status, 401, 'the old password is refused');
  const fresh = new Browser(issuer);
  t.equal((await fresh.signIn(email, 'a brand new passphrase')).status, 303, 'the new one signs in');
  t.ok(await signedIn(fresh), 'and that session works');
  await t.rejects(changeUserPassword(app.services, { teamId: tenant.teamId, userId: user.id, password: 'short' }, { sessionIds: [] }), /at least 8 characters/);

  const none = await changeUserPassword(app.services, { teamId: tenant.teamId, userId: user.id, password: null }, { sessionIds: [] });
  await settle(app, none.position);
  t.notOk(await signedIn(fresh), 'taking the password away ends the sessions too');
  t.equal((await new Browser(issuer).signIn(email, 'a brand new passphrase')).status, 401, 'and nobody signs in as that user');
});

t.test('a session stamp with no sign-out everywhere is the stamp sessions recorded before there were epochs (they survive the upgrade)', async (t) => {
  const hash = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
  t.equal(passwordStamp(hash), createHash('sha256').update(`dashboard-session|${hash}`).digest('hex').slice(0, 32));
  t.equal(sessionStampOf({ passwordHash: hash }), passwordStamp(hash));
  t.not(sessionStampOf({ passwordHash: hash, sessionEpoch: 1 }), passwordStamp(hash));
  t.equal(sessionStampOf({ passwordHash: null }), null);
});

t.test('sign out everywhere ends every session before it, even one the read models had not listed yet', async (t) => {
  const { app, tenant, issuer, email, listed, unlisted, user, sessionIds } = await twoSessionsOneListed(t);

  await settle(app, await signOutEverywhere(app.services, { teamId: tenant.teamId, userId: user.id }, { sessionIds }));
  t.notOk(await signedIn(listed), 'the listed session ended');
  t.notOk(await signedIn(unlisted), 'the unlisted one too');
  t.match((await app.services.events.readStream(`team-${tenant.teamId}`)).at(-1), { type: 'UserSignedOutEverywhere', data: { userId: user.id } }, 'on the record');
  const again = new Browser(issuer);
  t.equal((await again.signIn(email)).status, 303, 'the same password signs in afterwards');
  t.ok(await signedIn(again), 'and that session works');
  const changed = await again.request('/dashboard/password', { form: { csrf: formFields((await again.request('/dashboard/team')).text, '/dashboard/password').csrf!, current_password: PASSWORD, new_password: 'a brand new passphrase', confirm_password: 'a brand new passphrase' } });
  t.equal(changed.status, 303);
  t.ok(await signedIn(again), 'a password changed after a sign-out everywhere keeps this browser signed in');
});

t.test('sign out everywhere ends every session of the person, and only theirs', async (t) => {
  const { app, tenant, issuer, ownerEmail } = await startOAuthApp();
  t.teardown(() => app.close());
  const [here, there, colleague] = [new Browser(issuer), new Browser(issuer), new Browser(issuer)];
  t.equal((await here.signIn(ownerEmail)).status, 303);
  t.equal((await there.signIn(ownerEmail)).status, 303);
  t.equal((await colleague.signIn(await addTeamUser(app, tenant.teamId, 'admin'))).status, 303);
  const home = await here.request('/dashboard');
  const fields = formFields(home.text, '/dashboard/sign-out-everywhere');
  t.equal((await here.request('/dashboard/sign-out-everywhere', { form: { csrf: 'forged' } })).status, 303);
  t.ok(await signedIn(there), 'without the CSRF token nothing ends');
  const out = await here.request('/dashboard/sign-out-everywhere', { form: fields });
  t.equal(out.status, 303);
  t.equal(out.location, '/dashboard/sign-in');
  t.notOk(await signedIn(here), 'this browser is signed out');
  t.notOk(await signedIn(there), 'so is the other one');
  t.ok(await signedIn(colleague), "a colleague's session goes on");
  const ended = [];
  for await (const e of eventsOfTypes(app.services.events, ['DashboardSessionEnded'])) ended.push(e);
  t.equal(ended.length, 2, 'both sessions of the person, recorded');
  for (const e of ended) t.match(e.metadata, { actorKind: 'dashboard_user' }, 'as done by the person');
});
