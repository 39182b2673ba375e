import t from 'tap';
import { registerOAuthClientDynamically } from '../../src/commands/oauth.ts';
import { createTenant } from '../helpers/testApp.ts';
import { Browser, PASSWORD, addTeamUser, formFields, obtainCode, startOAuthApp, tokenRequest } from './helpers.ts';

/**
 * A self-registered client (RFC 7591) belongs to no team, so the team that authorized it cannot
 * delete it; the dashboard's connected apps list every grant of the team in force and revoke one:
 * its access token stops working at once and its refresh token is refused.
 */
t.test('connected apps: a team revokes the access it granted to an app it does not own', async (t) => {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const client = await registerOAuthClientDynamically(app.services, { name: 'Desktop MCP client', redirectUris: ['https://app.example.test/callback'], clientUri: null });
  await app.services.projections.waitFor(client.position!, 5_000);

  const owner = new Browser(issuer);
  t.equal((await owner.signIn(ownerEmail)).status, 303);
  const { code, verifier, redirectUri } = await obtainCode(owner, issuer, client, [tenant.siteId]);
  const tokens = await tokenRequest(issuer, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client.clientId });
  t.equal(tokens.status, 200);
  const access = String(tokens.json.access_token);
  const refresh = String(tokens.json.refresh_token);
  const list = () => fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, { headers: { authorization: `Bearer ${access}` } });
  t.equal((await list()).status, 200, 'the token works');
  const subscribed = await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label: 'the app', url: 'https://hooks.example.com/in', eventTypes: ['outreach.reply_sent'] }),
  });
  t.equal(subscribed.status, 201);
  const subscriptionId = ((await subscribed.json()) as { subscription: { id: string } }).subscription.id;

  // A consent whose code is never redeemed gives the app no access: not listed.
  const abandoned = await registerOAuthClientDynamically(app.services, { name: 'Abandoned client', redirectUris: ['https://app.example.test/callback'], clientUri: null });
  await app.services.projections.waitFor(abandoned.position!, 5_000);
  await obtainCode(owner, issuer, abandoned, [tenant.siteId]);

  const page = await owner.request('/dashboard/oauth-apps');
  t.notMatch(page.text, /Abandoned client/, 'a consent without a redeemed code is not a connected app');
  t.equal(page.status, 200);
  t.match(page.text, /Connected apps/);
  t.match(page.text, /Desktop MCP client/, 'the app the team does not own is listed');
  t.match(page.text, new RegExp(ownerEmail), 'with who authorized it');
  const grantAction = /action="(\/dashboard\/oauth-apps\/grants\/[^"]+\/revoke)"/.exec(page.text)?.[1];
  t.ok(grantAction, 'with a revoke button');

  // Another team's admin cannot revoke it, nor see it; a member of the team cannot revoke it.
  const otherEmail = `other-${Date.now()}@example.test`;
  await createTenant(app.services, { email: otherEmail, password: PASSWORD });
  const other = new Browser(issuer);
  t.equal((await other.signIn(otherEmail)).status, 303);
  const otherPage = await other.request('/dashboard/oauth-apps');
  t.notMatch(otherPage.text, /Desktop MCP client/, "another team does not see the grant");
  const fromOther = await other.request(grantAction!, { form: formFields(otherPage.text, '/dashboard/sign-out') });
  t.equal(fromOther.status, 404, "another team's revoke is answered as a missing app");
  const member = new Browser(issuer);
  t.equal((await member.signIn(await addTeamUser(app, tenant.teamId, 'member'))).status, 303);
  const memberPage = await member.request('/dashboard/oauth-apps');
  t.notMatch(memberPage.text, /Revoke access of/, 'a member sees no revoke button');
  t.equal((await member.request(grantAction!, { form: formFields(memberPage.text, '/dashboard/sign-out') })).status, 403, 'and cannot revoke');
  t.equal((await list()).status, 200, 'the token still works');

  const revoked = await owner.request(grantAction!, { form: formFields(page.text, grantAction!) });
  t.equal(revoked.status, 303);
  t.equal((await list()).status, 401, 'the access token stops working at once');
  const refreshed = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: refresh, client_id: client.clientId });
  t.equal(refreshed.status, 400);
  t.equal(refreshed.json.error, 'invalid_grant', 'the refresh token is refused');
  t.match(
    (await app.services.events.readStream(`webhook_subscription-${subscriptionId}`)).at(-1),
    { type: 'SubscriptionDeleted', metadata: { actorKind: 'dashboard_user', cause: { reason: 'revoked_by_team' } } },
    'the webhook subscription the app created is deleted, by the person who revoked the app, and the log says why',
  );
  const after = await owner.request('/dashboard/oauth-apps');
  t.notMatch(after.text, /Desktop MCP client/, 'the app is no longer listed');
  t.match(after.text, /No app has access to this team/);
});
