import t from 'tap';
import { changeSiteSettings, createSite } from '../../src/commands/tenancy.ts';
import { listGrantsOfClient } from '../../src/readModels/oauthGrants.ts';
import { anotherSite } from '../helpers/http.ts';
import { bearer, TestClock } from '../helpers/testApp.ts';
import { Browser, addTeamUser, authorizeUrl, basicAuth, formFields, obtainCode, pkce, registerClient, startOAuthApp, tokenRequest } from './helpers.ts';

const REDIRECT = 'https://app.example.test/callback';

async function setup(clock?: TestClock) {
  const ctx = await startOAuthApp({ clock });
  const browser = new Browser(ctx.issuer);
  const signIn = await browser.signIn(ctx.ownerEmail);
  if (signIn.status !== 303) throw new Error('sign-in failed');
  return { ...ctx, browser };
}

const api = (issuer: string, siteId: string, token: string) =>
  fetch(`${issuer}/api/v1/sites/${siteId}/outreach/webhooks`, { headers: bearer(token) }).then(async (r) => ({
    status: r.status,
    json: (await r.json()) as { error: { code: string }; subscriptions: Array<{ label: string }> },
  }));

const redeem = (issuer: string, client: { clientId: string }, code: { code: string; verifier: string; redirectUri: string }, extra: Record<string, string> = {}) =>
  tokenRequest(issuer, { grant_type: 'authorization_code', client_id: client.clientId, code: code.code, redirect_uri: code.redirectUri, code_verifier: code.verifier, ...extra });

t.test('authorization request refusals', async (t) => {
  const { app, tenant, issuer, browser } = await setup();
  t.teardown(() => app.close());
  const client = await registerClient(app, tenant, 'none');
  const { challenge } = pkce();
  const errorOf = async (params: Parameters<typeof authorizeUrl>[1]) => {
    const res = await browser.request(authorizeUrl(issuer, params));
    t.equal(res.status, 303, `redirected for ${JSON.stringify(params)}`);
    const url = new URL(res.location!);
    t.equal(url.origin + url.pathname, REDIRECT);
    t.equal(url.searchParams.get('iss'), issuer);
    t.notOk(url.searchParams.get('code'));
    return url.searchParams;
  };

  t.test('no PKCE', async (t) => {
    const p = await errorOf({ client_id: client.clientId, scope: 'webhooks:read', state: 's1' });
    t.equal(p.get('error'), 'invalid_request');
    t.equal(p.get('state'), 's1');
  });
  t.test('plain method', async (t) => {
    const p = await errorOf({ client_id: client.clientId, scope: 'webhooks:read', code_challenge: challenge, code_challenge_method: 'plain' });
    t.equal(p.get('error'), 'invalid_request');
    t.match(p.get('error_description'), /S256/);
  });
  t.test('missing method (would default to plain)', async (t) => {
    const url = new URL(authorizeUrl(issuer, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: challenge }));
    url.searchParams.delete('code_challenge_method');
    const res = await browser.request(url.toString());
    t.equal(new URL(res.location!).searchParams.get('error'), 'invalid_request');
  });
  t.test('unknown scope', async (t) => {
    const p = await errorOf({ client_id: client.clientId, scope: 'webhooks:read admin:everything', code_challenge: challenge });
    t.equal(p.get('error'), 'invalid_scope');
  });
  t.test('response_type token', async (t) => {
    const p = await errorOf({ client_id: client.clientId, scope: 'webhooks:read', code_challenge: challenge, response_type: 'token' });
    t.equal(p.get('error'), 'unsupported_response_type');
  });
  t.test('no state: not an error (OAuth 2.1 §4.1.1, PKCE ties the code to the request); the callback carries none', async (t) => {
    const { verifier, challenge: ownChallenge } = pkce();
    const url = new URL(authorizeUrl(issuer, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: ownChallenge }));
    url.searchParams.delete('state');
    const res = await browser.consent(url.toString(), 'approve', [tenant.siteId]);
    t.equal(res.status, 303);
    const back = new URL(res.location!);
    t.equal(back.searchParams.has('state'), false);
    t.equal(back.searchParams.get('iss'), issuer);
    const token = await tokenRequest(issuer, { grant_type: 'authorization_code', client_id: client.clientId, code: back.searchParams.get('code')!, redirect_uri: REDIRECT, code_verifier: verifier });
    t.equal(token.status, 200);
  });
  t.test('redirect URI mismatch: an error page, never a redirect', async (t) => {
    for (const redirect_uri of ['https://evil.example/callback', `${REDIRECT}/`, `${REDIRECT}?x=1`, 'https://APP.example.test/callback']) {
      const res = await browser.request(authorizeUrl(issuer, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: challenge, redirect_uri }));
      t.equal(res.status, 400, redirect_uri);
      t.equal(res.location, null);
      t.match(res.text, /redirect_uri does not match/);
    }
  });
  t.test('unknown client: an error page', async (t) => {
    const res = await browser.request(authorizeUrl(issuer, { client_id: 'svc_000000000000000000000000', scope: 'webhooks:read', code_challenge: challenge }));
    t.equal(res.status, 400);
    t.equal(res.location, null);
  });
  t.test('deny gives access_denied', async (t) => {
    const res = await browser.consent(authorizeUrl(issuer, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: challenge, state: 'd1' }), 'deny', []);
    const url = new URL(res.location!);
    t.equal(url.searchParams.get('error'), 'access_denied');
    t.equal(url.searchParams.get('state'), 'd1');
    t.equal(url.searchParams.get('iss'), issuer);
  });
  t.test('consent POST without the CSRF token is refused', async (t) => {
    const page = await browser.request(authorizeUrl(issuer, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: challenge }));
    const fields = formFields(page.text, '/oauth/authorize');
    const res = await browser.request('/oauth/authorize', { form: { ...fields, csrf: 'forged', decision: 'approve', site_ids: tenant.siteId } });
    t.equal(res.status, 403);
    t.equal(res.location, null);
  });
  t.test('the consent page cannot be framed and names the personal data of inbox:read', async (t) => {
    const page = await browser.request(authorizeUrl(issuer, { client_id: client.clientId, scope: 'inbox:read', code_challenge: challenge }));
    t.equal(page.status, 200);
    t.equal(page.headers.get('x-frame-options'), 'DENY');
    t.equal(page.headers.get('strict-transport-security'), null, 'no HSTS on a plain-http PUBLIC_BASE_URL');
    t.match(page.text, /personal data/);
    t.match(page.text, /app\.example\.test/);
  });
  t.test('a signed-out user is sent to sign in and back', async (t) => {
    const anon = new Browser(issuer);
    const target = authorizeUrl(issuer, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: challenge });
    const res = await anon.request(target);
    t.equal(res.status, 303);
    t.match(res.location, /^\/dashboard\/sign-in\?return_to=/);
  });
});

t.test('token request refusals', async (t) => {
  const clock = new TestClock(new Date());
  const { app, tenant, issuer, browser } = await setup(clock);
  t.teardown(() => app.close());
  const client = await registerClient(app, tenant, 'none', [REDIRECT, 'http://127.0.0.1:8765/cb']);

  t.test('wrong verifier', async (t) => {
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    const r = await redeem(issuer, client, { ...code, verifier: pkce().verifier });
    t.equal(r.status, 400);
    t.equal(r.json.error, 'invalid_grant');
    t.equal(r.headers.get('cache-control'), 'no-store');
  });
  t.test('redirect_uri differs from the authorization request', async (t) => {
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    const r = await redeem(issuer, client, { ...code, redirectUri: 'http://127.0.0.1:8765/cb' });
    t.equal(r.json.error, 'invalid_grant');
  });
  t.test('code reuse revokes the tokens issued from it', async (t) => {
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    const first = await redeem(issuer, client, code);
    t.equal(first.status, 200);
    t.equal((await api(issuer, tenant.siteId, first.json.access_token as string)).status, 200);
    const second = await redeem(issuer, client, code);
    t.equal(second.status, 400);
    t.equal(second.json.error, 'invalid_grant');
    t.equal((await api(issuer, tenant.siteId, first.json.access_token as string)).status, 401, 'access token revoked');
    const refresh = await tokenRequest(issuer, { grant_type: 'refresh_token', client_id: client.clientId, refresh_token: first.json.refresh_token as string });
    t.equal(refresh.json.error, 'invalid_grant', 'refresh token revoked');
  });
  t.test('two concurrent redemptions: exactly one wins', async (t) => {
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    const results = await Promise.all([redeem(issuer, client, code), redeem(issuer, client, code), redeem(issuer, client, code)]);
    t.equal(results.filter((r) => r.status === 200).length, 1);
    t.equal(results.filter((r) => r.json.error === 'invalid_grant').length, 2);
  });
  t.test('expired code (60 seconds)', async (t) => {
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    clock.advance(61_000);
    const r = await redeem(issuer, client, code);
    t.equal(r.json.error, 'invalid_grant');
    t.match(r.json.error_description, /expired/);
  });
  t.test('a code issued to another client', async (t) => {
    const other = await registerClient(app, tenant, 'none');
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    const r = await redeem(issuer, other, code);
    t.equal(r.json.error, 'invalid_grant');
  });
  t.test('parallel refreshes with one refresh token all succeed within the reuse grace; each new token works', async (t) => {
    const first = await redeem(issuer, client, await obtainCode(browser, issuer, client, [tenant.siteId]));
    const rt1 = first.json.refresh_token as string;
    // What the MCP SDK does when three requests find their access token expired at once.
    const answers = await Promise.all([1, 2, 3].map(() => tokenRequest(issuer, { grant_type: 'refresh_token', client_id: client.clientId, refresh_token: rt1 })));
    t.same(answers.map((a) => a.status), [200, 200, 200]);
    for (const a of answers) t.equal((await api(issuer, tenant.siteId, a.json.access_token as string)).status, 200, 'its access token works');
    t.equal(new Set(answers.map((a) => a.json.refresh_token)).size, 3, 'each got its own refresh token');
    clock.advance(31_000);
    const late = answers[1]!.json.refresh_token as string;
    const kept = await tokenRequest(issuer, { grant_type: 'refresh_token', client_id: client.clientId, refresh_token: late });
    t.equal(kept.status, 200, 'whichever the client kept refreshes');
    const sibling = await tokenRequest(issuer, { grant_type: 'refresh_token', client_id: client.clientId, refresh_token: answers[0]!.json.refresh_token as string });
    t.equal(sibling.json.error, 'invalid_grant', 'then the others are spent: one presented later revokes the grant (no second line of tokens)');
    t.equal((await api(issuer, tenant.siteId, kept.json.access_token as string)).status, 401);
  });
  t.test('refresh token reuse past the grace revokes the grant', async (t) => {
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    const first = await redeem(issuer, client, code);
    const rt1 = first.json.refresh_token as string;
    const second = await tokenRequest(issuer, { grant_type: 'refresh_token', client_id: client.clientId, refresh_token: rt1 });
    t.equal(second.status, 200);
    clock.advance(30_000);
    const replay = await tokenRequest(issuer, { grant_type: 'refresh_token', client_id: client.clientId, refresh_token: rt1 });
    t.equal(replay.json.error, 'invalid_grant');
    t.equal((await api(issuer, tenant.siteId, second.json.access_token as string)).status, 401, 'tokens of the grant revoked');
    const next = await tokenRequest(issuer, { grant_type: 'refresh_token', client_id: client.clientId, refresh_token: second.json.refresh_token as string });
    t.equal(next.json.error, 'invalid_grant', 'the newest refresh token too');
  });
  t.test("revocation of another client's token is refused (RFC 7009 §2.1) and leaves it valid; its own client revokes it", async (t) => {
    const other = await registerClient(app, tenant, 'none');
    const tokens = (await redeem(issuer, client, await obtainCode(browser, issuer, client, [tenant.siteId]))).json;
    const revoke = (clientId: string, token: string) =>
      fetch(`${issuer}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: clientId, token }) }).then(
        async (r) => ({ status: r.status, text: await r.text() }),
      );
    for (const token of [tokens.access_token as string, tokens.refresh_token as string]) {
      const refused = await revoke(other.clientId, token);
      t.equal(refused.status, 400);
      t.same(JSON.parse(refused.text), { error: 'unauthorized_client', error_description: 'The token was not issued to this client.' });
    }
    t.equal((await api(issuer, tenant.siteId, tokens.access_token as string)).status, 200, 'the access token still works');
    t.equal((await revoke(other.clientId, 'svc_oauth_unknown')).status, 200, 'an unknown token is still 200');
    t.equal((await revoke(client.clientId, tokens.access_token as string)).status, 200);
    t.equal((await api(issuer, tenant.siteId, tokens.access_token as string)).status, 401, 'revoked by its own client');
  });
  t.test('widening the scope on refresh is refused', async (t) => {
    const code = await obtainCode(browser, issuer, client, [tenant.siteId], { scope: 'webhooks:read' });
    const first = await redeem(issuer, client, code);
    const r = await tokenRequest(issuer, { grant_type: 'refresh_token', client_id: client.clientId, refresh_token: first.json.refresh_token as string, scope: 'webhooks:read webhooks:write' });
    t.equal(r.json.error, 'invalid_scope');
  });
  t.test('a token used on a site not consented gets 404 SITE_NOT_FOUND', async (t) => {
    const other = await createSite(app.services, { teamId: tenant.teamId, domain: 'other.example.test', plan: 'advanced' }, app.config.MAIL_DOMAIN);
    await app.services.projections.waitFor(other.position!, 5_000);
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    const tokens = await redeem(issuer, client, code);
    t.equal((await api(issuer, tenant.siteId, tokens.json.access_token as string)).status, 200);
    const res = await api(issuer, other.siteId, tokens.json.access_token as string);
    t.equal(res.status, 404);
    t.equal(res.json.error.code, 'SITE_NOT_FOUND');
  });
  t.test('an expired access token gets 401', async (t) => {
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    const tokens = await redeem(issuer, client, code);
    clock.advance(3601_000);
    t.equal((await api(issuer, tenant.siteId, tokens.json.access_token as string)).status, 401);
  });
  t.test('malformed token requests', async (t) => {
    t.equal((await tokenRequest(issuer, { client_id: client.clientId })).json.error, 'invalid_request');
    t.equal((await tokenRequest(issuer, { grant_type: 'password', client_id: client.clientId })).json.error, 'unsupported_grant_type');
    t.equal((await tokenRequest(issuer, { grant_type: 'authorization_code', client_id: client.clientId })).json.error, 'invalid_request');
    const unknown = await tokenRequest(issuer, { grant_type: 'authorization_code', client_id: 'svc_ffffffffffffffffffffffff', code: 'x', redirect_uri: REDIRECT, code_verifier: 'y' });
    t.equal(unknown.status, 401);
    t.equal(unknown.json.error, 'invalid_client');
    const dup = await fetch(`${issuer}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&grant_type=authorization_code&client_id=${client.clientId}`,
    });
    t.equal(((await dup.json()) as { error: string }).error, 'invalid_request');
    const xml = await fetch(`${issuer}/oauth/token`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    t.equal(xml.status, 400);
    t.equal(((await xml.json()) as { error: string }).error, 'invalid_request');
  });
  t.test('a JSON body is accepted', async (t) => {
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    const res = await fetch(`${issuer}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: client.clientId, code: code.code, redirect_uri: code.redirectUri, code_verifier: code.verifier }),
    });
    t.equal(res.status, 200);
    t.equal(res.headers.get('cache-control'), 'no-store');
  });
});

t.test('confidential clients: wrong secret, rotated secret, deleted client', async (t) => {
  const { app, tenant, issuer, browser } = await setup();
  t.teardown(() => app.close());

  t.test('wrong secret', async (t) => {
    const basic = await registerClient(app, tenant, 'client_secret_basic');
    const code = await obtainCode(browser, issuer, basic, [tenant.siteId]);
    const body = { grant_type: 'authorization_code', code: code.code, redirect_uri: code.redirectUri, code_verifier: code.verifier };
    const r = await tokenRequest(issuer, body, basicAuth(basic.clientId, 'svc_ocsec_wrong'));
    t.equal(r.status, 401);
    t.equal(r.json.error, 'invalid_client');
    t.match(r.headers.get('www-authenticate'), /^Basic/);
    const viaPost = await tokenRequest(issuer, { ...body, client_id: basic.clientId, client_secret: basic.clientSecret! });
    t.equal(viaPost.json.error, 'invalid_client', 'a basic client may not use client_secret_post');
    const noSecret = await tokenRequest(issuer, { ...body, client_id: basic.clientId });
    t.equal(noSecret.json.error, 'invalid_client', 'a confidential client may not skip authentication');

    const post = await registerClient(app, tenant, 'client_secret_post');
    const code2 = await obtainCode(browser, issuer, post, [tenant.siteId]);
    const r2 = await tokenRequest(issuer, { grant_type: 'authorization_code', code: code2.code, redirect_uri: code2.redirectUri, code_verifier: code2.verifier, client_id: post.clientId, client_secret: 'svc_ocsec_wrong' });
    t.equal(r2.status, 401);
    t.equal(r2.json.error, 'invalid_client');
  });

  t.test('rotated secret: old refused, access token still valid, refresh needs the new secret', async (t) => {
    const client = await registerClient(app, tenant, 'client_secret_post');
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    const tokens = await redeem(issuer, client, code, { client_secret: client.clientSecret! });
    t.equal(tokens.status, 200);

    const appsPage = await browser.request('/dashboard/oauth-apps');
    const fields = formFields(appsPage.text, `/dashboard/oauth-apps/${client.clientId}/rotate-secret`);
    const rotated = await browser.request(`/dashboard/oauth-apps/${client.clientId}/rotate-secret`, { form: fields });
    t.equal(rotated.status, 200);
    const newSecret = /id="client_secret">(svc_ocsec_[A-Za-z0-9_-]+)</.exec(rotated.text)?.[1];
    t.ok(newSecret, 'new secret shown once');

    t.equal((await api(issuer, tenant.siteId, tokens.json.access_token as string)).status, 200, 'access token still valid');
    const old = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: tokens.json.refresh_token as string, client_id: client.clientId, client_secret: client.clientSecret! });
    t.equal(old.status, 401);
    t.equal(old.json.error, 'invalid_client', 'old secret refused');
    const fresh = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: tokens.json.refresh_token as string, client_id: client.clientId, client_secret: newSecret! });
    t.equal(fresh.status, 200, 'refresh with the new secret');
  });

  t.test('deleted client: tokens dead, its subscriptions gone', async (t) => {
    const client = await registerClient(app, tenant, 'client_secret_basic');
    const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
    const tokens = await tokenRequest(
      issuer,
      { grant_type: 'authorization_code', code: code.code, redirect_uri: code.redirectUri, code_verifier: code.verifier },
      // RFC 9110 §11.6.2: one or more spaces after the scheme.
      { authorization: basicAuth(client.clientId, client.clientSecret!).authorization.replace('Basic ', 'Basic  ') },
    );
    t.equal(tokens.status, 200, 'HTTP Basic with two spaces after the scheme');
    const access = tokens.json.access_token as string;
    const created = await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, {
      method: 'POST',
      headers: { ...bearer(access), 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'by app', url: 'https://hooks.example.com/a', eventTypes: ['outreach.reply_sent'] }),
    });
    t.equal(created.status, 201);
    const byKey = await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, {
      method: 'POST',
      headers: { ...bearer(tenant.key), 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'by key', url: 'https://hooks.example.com/b', eventTypes: ['outreach.reply_sent'] }),
    });
    t.equal(byKey.status, 201);

    const appsPage = await browser.request('/dashboard/oauth-apps');
    const fields = formFields(appsPage.text, `/dashboard/oauth-apps/${client.clientId}/delete`);
    const deleted = await browser.request(`/dashboard/oauth-apps/${client.clientId}/delete`, { form: fields });
    t.equal(deleted.status, 303);

    t.equal((await api(issuer, tenant.siteId, access)).status, 401, 'access token dead');
    const refresh = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: tokens.json.refresh_token as string }, basicAuth(client.clientId, client.clientSecret!));
    t.equal(refresh.json.error, 'invalid_client', 'client gone');
    const list = await api(issuer, tenant.siteId, tenant.key);
    const labels = (list.json.subscriptions as Array<{ label: string }>).map((s) => s.label);
    t.notOk(labels.includes('by app'), 'subscription created by the client deleted');
    t.ok(labels.includes('by key'), 'other subscriptions kept');
    const authorize = await browser.request(authorizeUrl(issuer, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: pkce().challenge }));
    t.equal(authorize.status, 400);

    const grants = await listGrantsOfClient(app.services.readModels, client.clientId);
    t.same(grants.map((g) => g.revokedReason), ['client_deleted']);
  });
});

t.test('a member cannot consent', async (t) => {
  const { app, tenant, issuer } = await setup();
  t.teardown(() => app.close());
  const client = await registerClient(app, tenant, 'none');
  const memberEmail = await addTeamUser(app, tenant.teamId, 'member');
  const member = new Browser(issuer);
  t.equal((await member.signIn(memberEmail)).status, 303);
  const url = authorizeUrl(issuer, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: pkce().challenge });
  const page = await member.request(url);
  t.equal(page.status, 403);
  t.match(page.text, /Only team owners and admins can authorize apps/);
  t.notMatch(page.text, /value="approve"/);
  const fields = formFields(page.text, '/oauth/authorize');
  const forced = await member.request('/oauth/authorize', { form: { ...fields, decision: 'approve', site_ids: tenant.siteId } });
  t.equal(forced.status, 403, 'a forged approval is refused');
  t.equal(forced.location, null);

  const adminEmail = await addTeamUser(app, tenant.teamId, 'admin');
  const admin = new Browser(issuer);
  await admin.signIn(adminEmail);
  const ok = await admin.consent(url, 'approve', [tenant.siteId]);
  t.equal(ok.status, 303);
  t.ok(new URL(ok.location!).searchParams.get('code'), 'an admin can');
});

t.test('every grant is in the event history', async (t) => {
  const { app, tenant, issuer, browser } = await setup();
  t.teardown(() => app.close());
  const client = await registerClient(app, tenant, 'none');
  const code = await obtainCode(browser, issuer, client, [tenant.siteId]);
  const tokens = await redeem(issuer, client, code);
  await tokenRequest(issuer, { grant_type: 'refresh_token', client_id: client.clientId, refresh_token: tokens.json.refresh_token as string });
  const events = await app.services.events.readAll();
  const types = events.map((e) => e.type);
  for (const type of ['OAuthClientRegistered', 'DashboardSessionStarted', 'ConsentGiven', 'AuthorizationCodeIssued', 'AuthorizationCodeRedeemed', 'AccessTokenIssued', 'RefreshTokenIssued', 'RefreshTokenRotated']) {
    t.ok(types.includes(type), type);
  }
  const consent = events.find((e) => e.type === 'ConsentGiven')!.data as Record<string, unknown>;
  t.same(consent.siteIds, [tenant.siteId]);
  t.same(consent.scopes, ['webhooks:read', 'webhooks:write']);
  t.equal(consent.userId, tenant.ownerUserId);
  const serialized = JSON.stringify(events.map((e) => e.data));
  t.notOk(serialized.includes(tokens.json.access_token as string), 'no token in clear');
  t.notOk(serialized.includes(code.code), 'no code in clear');
});

t.test('the consent screen says which of the sites offered has no active licence (the app would be refused there)', async (t) => {
  const { app, tenant, issuer, browser } = await setup();
  t.teardown(() => app.close());
  const closed = await anotherSite(app.services, tenant.teamId, 'closed.example.test');
  const { position } = await changeSiteSettings(app.services, { siteId: closed, changes: { licensed: false } });
  await app.services.projections.waitFor(position!, 5_000);
  const client = await registerClient(app, tenant, 'none');
  const page = await browser.request(authorizeUrl(issuer, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: pkce().challenge }));
  t.equal(page.status, 200);
  const label = (siteId: string) => new RegExp(`<label><input type="checkbox" name="site_ids" value="${siteId}">[^\\n]*?</label>`).exec(page.text)?.[0] ?? '';
  t.match(label(closed), /no active licence: the app is refused on it/);
  t.notMatch(label(tenant.siteId), /licence/, 'a licensed site: no note');
});
