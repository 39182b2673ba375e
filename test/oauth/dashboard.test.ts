import t from 'tap';
import { addUser } from '../../src/commands/tenancy.ts';
import { dashboardSessionStream } from '../../src/domain/dashboardSession.ts';
import { openSessionsOfUser } from '../../src/readModels/dashboardSessions.ts';
import { findUserByEmail } from '../../src/readModels/users.ts';
import { bearer, TestClock } from '../helpers/testApp.ts';
import { Browser, PASSWORD, addTeamUser, formFields, startOAuthApp } from './helpers.ts';

t.test('sign-in: cookie flags, CSRF, wrong password, throttle, sign-out', async (t) => {
  const clock = new TestClock(new Date());
  const { app, ownerEmail, issuer } = await startOAuthApp({ clock });
  t.teardown(() => app.close());
  const browser = new Browser(issuer);

  const home = await browser.request('/dashboard');
  t.equal(home.status, 303);
  t.match(home.location, /^\/dashboard\/sign-in/);

  const form = await browser.request('/dashboard/sign-in');
  t.equal(form.status, 200);
  const fields = formFields(form.text, '/dashboard/sign-in');
  t.ok(fields.csrf, 'the sign-in form carries a CSRF token');

  const noCsrf = await new Browser(issuer).request('/dashboard/sign-in', { form: { email: ownerEmail, password: PASSWORD } });
  t.equal(noCsrf.status, 403, 'sign-in without the CSRF token is refused');

  const wrong = await browser.request('/dashboard/sign-in', { form: { ...fields, email: ownerEmail, password: 'nope' } });
  t.equal(wrong.status, 401);
  t.match(wrong.text, /email or password is incorrect/);

  const ok = await browser.signIn(ownerEmail);
  t.equal(ok.status, 303);
  t.equal(ok.location, '/dashboard');
  const cookie = ok.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
  t.match(cookie, /HttpOnly/);
  t.match(cookie, /SameSite=Lax/);
  t.notMatch(cookie, /Secure/, 'not Secure on plain-HTTP loopback');
  const dashboard = await browser.request('/dashboard');
  t.equal(dashboard.status, 200);
  t.match(dashboard.text, new RegExp(ownerEmail));
  const nav = /<nav aria-label="Dashboard">([\s\S]*?)<\/nav>/.exec(dashboard.text)?.[1] ?? '';
  t.same([...nav.matchAll(/href="([^"]+)"/g)].map((m) => m[1]), ['/dashboard', '/dashboard/inbox', '/dashboard/oauth-apps', '/dashboard/api-keys', '/dashboard/webhooks', '/dashboard/agents', '/dashboard/team'], 'the navigation reaches every section');

  const forged = await browser.request('/dashboard/api-keys', { form: { csrf: 'forged', name: 'k', scopes: 'webhooks:read' } });
  t.equal(forged.status, 403, 'a dashboard form without the session CSRF token is refused');

  // Throttle: 5 failures per email and IP lock that pair out, even for the right password.
  const victim = await addTeamUser(app, (await findUserByEmail(app.services.readModels, ownerEmail))!.teamId, 'admin');
  const attacker = new Browser(issuer);
  for (let i = 0; i < 5; i++) t.equal((await attacker.signIn(victim, 'guess' + i)).status, 401);
  const locked = await attacker.signIn(victim, PASSWORD);
  t.equal(locked.status, 429);
  t.ok(Number(locked.headers.get('retry-after')) > 0);
  clock.advance(15 * 60_000 + 1000);
  t.equal((await attacker.signIn(victim, PASSWORD)).status, 303, 'the lock expires');

  // Concurrent guesses: each is counted before its password is checked, so a burst cannot pass the
  // check together (before: checked, verified for ~50 ms, then counted; all 40 were verified).
  const other = await addTeamUser(app, (await findUserByEmail(app.services.readModels, ownerEmail))!.teamId, 'member');
  const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => new Browser(issuer).signIn(other, `burst-${i}`)));
  const statuses = burst.map((r) => r.status);
  t.equal(statuses.filter((s) => s === 401).length, 5, 'exactly five guesses were checked');
  t.equal(statuses.filter((s) => s === 429).length, 35, 'the rest refused');
  t.equal((await new Browser(issuer).signIn(other, PASSWORD)).status, 429, 'and the pair is locked');
  clock.advance(15 * 60_000 + 1000);
  t.equal((await new Browser(issuer).signIn(other, PASSWORD)).status, 303, 'the lock expires (refused attempts given back: signInThrottle.test.ts)');

  const signOutFields = formFields(dashboard.text, '/dashboard/sign-out');
  const out = await browser.request('/dashboard/sign-out', { form: signOutFields });
  t.equal(out.status, 303);
  t.equal((await browser.request('/dashboard')).status, 303, 'signed out');
});

t.test("a form of another origin may not post to the pages; a second sign-in tab keeps the first tab's token", async (t) => {
  const { app, ownerEmail, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const browser = new Browser(issuer);
  const first = formFields((await browser.request('/dashboard/sign-in')).text, '/dashboard/sign-in');
  const second = formFields((await browser.request('/dashboard/join')).text, '/dashboard/join');
  t.equal(second.csrf, first.csrf, 'the join tab opened later did not replace the token of the sign-in tab');
  // A page on another port of the same host is the same site for cookies: it could set the sign-in
  // token's cookie and post a matching token, signing the browser in as another account.
  for (const headers of [{ 'sec-fetch-site': 'same-site' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'http://localhost:1' }, { origin: 'null' }] as Array<Record<string, string>>) {
    const res = await browser.request('/dashboard/sign-in', { form: { ...first, email: ownerEmail, password: PASSWORD }, headers });
    t.equal(res.status, 403, JSON.stringify(headers));
    t.match(res.text, /A form of another site may not be sent here/);
  }
  const consent = await browser.request('/oauth/authorize', { form: { csrf: 'x' }, headers: { 'sec-fetch-site': 'same-site' } });
  t.equal(consent.status, 403, 'the consent form too');
  const same = await browser.request('/dashboard/sign-in', { form: { ...first, email: ownerEmail, password: PASSWORD }, headers: { origin: new URL(issuer).origin } });
  t.equal(same.status, 303, 'the first tab signs in from this origin');
  const signedIn = new Browser(issuer);
  await signedIn.signIn(ownerEmail);
  const page = await signedIn.request('/dashboard/api-keys', { form: { name: 'x' }, headers: { 'sec-fetch-site': 'same-site' } });
  t.equal(page.status, 403, "a signed-in form from another origin is refused before its token is looked at");
});

t.test('sign-out ends the session and drops the cookie while the read models lag', async (t) => {
  // Before: sign-out caught the read models up first, so a lag answered 503 and the browser stayed signed in.
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp({ env: { CREDENTIAL_CATCH_UP_MS: '100' } });
  t.teardown(() => app.close());
  const browser = new Browser(issuer);
  await browser.signIn(ownerEmail);
  const csrf = formFields((await browser.request('/dashboard')).text, '/dashboard/sign-out').csrf!;
  const [sessionId] = await openSessionsOfUser(app.services.readModels, tenant.ownerUserId, new Date());

  await app.services.projections.stop();
  await addUser(app.services, { teamId: tenant.teamId, email: 'lagging@example.test', role: 'member', password: PASSWORD }); // a credential change they do not take in
  const lagging = await browser.request('/dashboard');
  t.equal(lagging.status, 503, 'the read models lag behind a credential change: a page that says so (it was a 500)');
  t.match(lagging.text, /retry shortly/);
  t.equal(lagging.headers.get('retry-after'), '1');

  t.equal((await browser.request('/dashboard/sign-out', { form: { csrf: 'forged' } })).status, 303);
  const stillThere = (await app.services.events.readStream(dashboardSessionStream(sessionId!))).map((e) => e.type);
  t.same(stillThere, ['DashboardSessionStarted'], 'a forged sign-out ends nothing');

  const out = await browser.request('/dashboard/sign-out', { form: { csrf } });
  t.equal(out.status, 303);
  t.equal(out.location, '/dashboard/sign-in');
  t.ok(out.headers.getSetCookie().some((c) => /^svc_session=;/.test(c) && /Expires=Thu, 01 Jan 1970/i.test(c)), 'the session cookie is cleared');
  const recorded = (await app.services.events.readStream(dashboardSessionStream(sessionId!))).map((e) => e.type);
  t.same(recorded, ['DashboardSessionStarted', 'DashboardSessionEnded'], 'and the session is ended in the log');
});

t.test('dashboard: register apps, API keys, webhook subscriptions', async (t) => {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const browser = new Browser(issuer);
  await browser.signIn(ownerEmail);

  const apps = await browser.request('/dashboard/oauth-apps');
  const csrf = formFields(apps.text, '/dashboard/oauth-apps').csrf!;
  const bad = await browser.request('/dashboard/oauth-apps', {
    form: { csrf, name: 'Bad', redirect_uris: 'http://example.com/cb', token_endpoint_auth_method: 'none' },
  });
  t.equal(bad.status, 400);
  t.match(bad.text, /must use HTTPS/);
  const made = await browser.request('/dashboard/oauth-apps', {
    form: { csrf, name: 'CRM <sync>', redirect_uris: 'https://crm.example.com/cb\nhttp://127.0.0.1:33418/callback', token_endpoint_auth_method: 'client_secret_basic' },
  });
  t.equal(made.status, 201);
  const clientId = /id="client_id">(svc_[0-9a-f]{24})</.exec(made.text)?.[1];
  const secret = /id="client_secret">(svc_ocsec_[A-Za-z0-9_-]{43})</.exec(made.text)?.[1];
  t.ok(clientId);
  t.ok(secret);
  const list = await browser.request('/dashboard/oauth-apps');
  t.match(list.text, /CRM &lt;sync&gt;/, 'names are escaped');
  t.notMatch(list.text, new RegExp(secret!), 'the secret is shown once');
  const events = JSON.stringify((await app.services.events.readAll()).map((e) => e.data));
  t.notOk(events.includes(secret!), 'only the hash is stored');

  const pub = await browser.request('/dashboard/oauth-apps', {
    form: { csrf, name: 'Desktop', redirect_uris: 'http://localhost:8080/cb', token_endpoint_auth_method: 'none' },
  });
  t.equal(pub.status, 201);
  t.notMatch(pub.text, /client_secret"/);

  // API keys: create (shown once), use, revoke.
  const keys = await browser.request('/dashboard/api-keys');
  const keyCsrf = formFields(keys.text, '/dashboard/api-keys').csrf!;
  const created = await browser.request('/dashboard/api-keys', { form: { csrf: keyCsrf, name: 'zapier', scopes: ['webhooks:read'], site_id: tenant.siteId } });
  t.equal(created.status, 201);
  const key = /id="api_key">(svc_[0-9a-f]{64})</.exec(created.text)?.[1];
  t.ok(key);
  const use = await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, { headers: bearer(key!) });
  t.equal(use.status, 200);
  const keyList = await browser.request('/dashboard/api-keys');
  t.match(keyList.text, /zapier/);
  const keyId = /action="\/dashboard\/api-keys\/([0-9A-Z]+)\/revoke"><input type="hidden" name="csrf" value="[^"]+"><button type="submit">Revoke zapier/.exec(keyList.text)?.[1];
  t.ok(keyId);
  const revoked = await browser.request(`/dashboard/api-keys/${keyId}/revoke`, { form: { csrf: keyCsrf } });
  t.equal(revoked.status, 303);
  t.equal((await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, { headers: bearer(key!) })).status, 401);

  // Webhook subscriptions per site, with their delivery state.
  await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, {
    method: 'POST',
    headers: { ...bearer(tenant.key), 'content-type': 'application/json' },
    body: JSON.stringify({ label: 'ops-hook', url: 'https://hooks.example.com/x', eventTypes: ['outreach.reply_sent'] }),
  });
  const hooks = await browser.request('/dashboard/webhooks');
  t.equal(hooks.status, 200);
  t.match(hooks.text, /ops-hook/);
  t.match(hooks.text, /<th>State<\/th><th>consecutive_failures<\/th>/);
  t.match(hooks.text, /<td>active<\/td><td>0<\/td>\s*<td>none yet<\/td>\s*<td><p>No deliveries yet.<\/p><\/td>/, 'the last delivery status (the spec), then the recent attempts');

  // Members see but cannot manage.
  const memberEmail = await addTeamUser(app, tenant.teamId, 'member');
  const member = new Browser(issuer);
  await member.signIn(memberEmail);
  const memberApps = await member.request('/dashboard/oauth-apps');
  t.match(memberApps.text, /Only owners and admins can register apps/);
  const memberCsrf = formFields(memberApps.text, '/dashboard/sign-out').csrf!;
  const refused = await member.request('/dashboard/oauth-apps', { form: { csrf: memberCsrf, name: 'x', redirect_uris: 'https://x.example/cb', token_endpoint_auth_method: 'none' } });
  t.equal(refused.status, 403);
});

t.test('behind HTTPS the cookies are Secure and host-bound, and pages send HSTS', async (t) => {
  const { startTestApp, createTenant } = await import('../helpers/testApp.ts');
  const app = await startTestApp({ env: { PUBLIC_BASE_URL: 'https://outreach.example.com' } });
  t.teardown(() => app.close());
  const email = 'secure-owner@example.test';
  await createTenant(app.services, { email, password: PASSWORD });
  const form = await app.fastify.inject({ method: 'GET', url: '/dashboard/sign-in' });
  const signinCookie = [form.headers['set-cookie']].flat().find((c) => String(c).startsWith('__Host-svc_signin='))!;
  t.match(signinCookie, /Secure/);
  t.equal(form.headers['strict-transport-security'], 'max-age=31536000', 'pages tell browsers to keep to https');
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)![1]!;
  const res = await app.fastify.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `__Host-svc_signin=${csrf}` },
    payload: new URLSearchParams({ csrf, email, password: PASSWORD, return_to: '//evil.example/x' }).toString(),
  });
  t.equal(res.statusCode, 303);
  t.equal(res.headers.location, '/dashboard', 'an off-site return_to is ignored');
  const session = [res.headers['set-cookie']].flat().find((c) => String(c).startsWith('__Host-svc_session='))!;
  t.match(session, /HttpOnly/);
  t.match(session, /Secure/);
  t.match(session, /SameSite=Lax/);
  t.match(session, /Path=\//);
  const meta = await app.fastify.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
  t.equal(meta.json().issuer, 'https://outreach.example.com');
});
