import t from 'tap';
import { registerOAuthClient } from '../../src/commands/oauth.ts';
import { bearer } from '../helpers/testApp.ts';
import { Browser, formFields } from '../oauth/helpers.ts';
import { startInboxDashboard } from './dashboardHelpers.ts';

/** Dashboard forms at their edges: a crafted return_to, a long reply in a non-Latin script, a refused form's input, a public client's secret. */
const d = await startInboxDashboard();
t.teardown(() => d.close());
const { tenant, issuer, app } = d;
const owner = new Browser(issuer);
if ((await owner.signIn(d.ownerEmail)).status !== 303) throw new Error('sign-in failed');

t.test('a return_to with a non-ASCII or control character goes to the dashboard instead of a 500', async (t) => {
  for (const returnTo of ['/dashboard/%E2%82%AC', '/dashboard/%00', '/dashboard/%09x']) {
    const res = await owner.request(`/dashboard/sign-in?return_to=${returnTo}`);
    t.equal(res.status, 303, `signed in, GET sign-in with return_to=${returnTo}`);
    t.equal(res.headers.get('location'), '/dashboard');
  }
  const fresh = new Browser(issuer);
  const signedIn = await fresh.signIn(d.ownerEmail, undefined, '/dashboard/\u20ac');
  t.equal(signedIn.status, 303, 'POST sign-in with return_to=/dashboard/€');
  t.equal(signedIn.headers.get('location'), '/dashboard');
  const kept = await new Browser(issuer).signIn(d.ownerEmail, undefined, '/dashboard/inbox?status=open');
  t.equal(kept.headers.get('location'), '/dashboard/inbox?status=open', 'a plain path is kept');
});

t.test('a reply the API accepts (14,000 Cyrillic characters) is accepted by the form too', async (t) => {
  const text = 'Привет '.repeat(2000);
  const path = `/dashboard/inbox/${tenant.siteId}/${await d.pitch()}`;
  const page = await owner.request(path);
  const res = await owner.request(`${path}/reply`, { form: { ...formFields(page.text, `${path}/reply`), text } });
  t.equal(res.status, 303, 'the dashboard sends it');
  const rest = await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/conversations/${await d.pitch()}/reply`, {
    method: 'POST',
    headers: { ...bearer(tenant.key), 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });
  t.equal(rest.status, 201, 'as the REST API does');
});

t.test('a refused form keeps what was typed', async (t) => {
  const path = `/dashboard/inbox/${tenant.siteId}/${await d.pitch()}`;
  const page = await owner.request(path);
  const typed = 'A long, carefully written reply <with> "quotes" & all';
  const res = await owner.request(`${path}/reply`, { form: { ...formFields(page.text, `${path}/reply`), idempotency_key: 'stale key!', text: typed } });
  t.equal(res.status, 400);
  t.match(res.text, '>A long, carefully written reply &lt;with&gt; &quot;quotes&quot; &amp; all</textarea>', 'the reply is back in the textarea, escaped');

  const hooks = (await owner.request('/dashboard/webhooks')).text;
  const action = `/dashboard/sites/${tenant.siteId}/webhooks`;
  const bad = await owner.request(action, { form: { ...formFields(hooks, action), label: 'My CRM "receiver"', url: 'http://crm.example.com/hook', event_types: ['outreach.reply_sent', 'outreach.message_received'] } });
  t.equal(bad.status, 400);
  t.match(bad.text, 'value="My CRM &quot;receiver&quot;"', 'the label is kept');
  t.match(bad.text, 'value="http://crm.example.com/hook"', 'the URL is kept');
  t.match(bad.text, /value="outreach\.reply_sent" checked/, 'the event types are kept');

  const apps = (await owner.request('/dashboard/oauth-apps')).text;
  const app_ = await owner.request('/dashboard/oauth-apps', {
    form: { ...formFields(apps, '/dashboard/oauth-apps'), name: 'Our <CRM>', redirect_uris: 'https://crm.example.com/cb\nhttp://evil.example.com/cb', token_endpoint_auth_method: 'client_secret_post' },
  });
  t.equal(app_.status, 400, 'an http redirect URI off loopback is refused');
  t.match(app_.text, 'value="Our &lt;CRM&gt;"', 'the app name is kept');
  t.match(app_.text, '>https://crm.example.com/cb\nhttp://evil.example.com/cb</textarea>', 'the redirect URIs are kept');
  t.match(app_.text, /value="client_secret_post" checked/, 'the client type is kept');

  const keys = (await owner.request('/dashboard/api-keys')).text;
  const key = await owner.request('/dashboard/api-keys', { form: { ...formFields(keys, '/dashboard/api-keys'), name: 'reporting', scopes: ['inbox:read'], site_id: 'not-a-site' } });
  t.equal(key.status, 400, 'an unknown site is refused');
  t.match(key.text, 'value="reporting"', 'the key name is kept');
  t.match(key.text, /value="inbox:read" checked/, 'the scopes are kept');
});

t.test('a reply is mailed once: a refused one comes back under its key, a stored one not shown yet does not come back', async (t) => {
  const path = `/dashboard/inbox/${tenant.siteId}/${await d.pitch({ subject: 'Once' })}`;
  const fields = formFields((await owner.request(path)).text, `${path}/reply`);
  const blank = await owner.request(`${path}/reply`, { form: { ...fields, text: '   ' } });
  t.equal(blank.status, 400);
  t.equal(formFields(blank.text, `${path}/reply`).idempotency_key, fields.idempotency_key, 'a refused reply comes back under the key it was sent with');

  // Stored and mailed, but the read models are behind (a long rebuild, load): the page says so.
  const config = app.services.config as { READ_YOUR_WRITES_TIMEOUT_MS: number };
  const timeout = config.READ_YOUR_WRITES_TIMEOUT_MS;
  config.READ_YOUR_WRITES_TIMEOUT_MS = 300;
  t.teardown(() => void (config.READ_YOUR_WRITES_TIMEOUT_MS = timeout));
  const mailed = d.sink.received.length;
  await app.services.projections.stop();
  const behind = await owner.request(`${path}/reply`, { form: { ...fields, text: 'Hi Jane, a person here.' } });
  app.services.projections.start();
  t.equal(behind.status, 503);
  t.match(behind.text, /stored/, 'the page says the reply is stored');
  t.equal(d.sink.received.length, mailed + 1, 'the mail left');
  t.notMatch(behind.text, 'Hi Jane, a person here.</textarea>', 'the text is not offered for sending again');
  t.not(formFields(behind.text, `${path}/reply`).idempotency_key, fields.idempotency_key, 'the next reply is a new one');

  // The browser's Back shows the form of a reply sent already (its key); an edited text is refused once, then sent as a new reply.
  const edited = await owner.request(`${path}/reply`, { form: { ...fields, text: 'A second, different reply.' } });
  t.equal(edited.status, 409);
  const again = formFields(edited.text, `${path}/reply`);
  t.not(again.idempotency_key, fields.idempotency_key, 'the refusal gives the form a new key');
  t.equal((await owner.request(`${path}/reply`, { form: { ...again, text: 'A second, different reply.' } })).status, 303, 'sent from the refusal page');
});

t.test('rotating the secret of a public client is a 409 saying it has none, not a 404', async (t) => {
  const { clientId } = await registerOAuthClient(app.services, { teamId: tenant.teamId, userId: tenant.ownerUserId, name: 'desktop', redirectUris: ['http://127.0.0.1/cb'], tokenEndpointAuthMethod: 'none' });
  await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000);
  const apps = await owner.request('/dashboard/oauth-apps');
  const csrf = formFields(apps.text, '/dashboard/sign-out').csrf!;
  const res = await owner.request(`/dashboard/oauth-apps/${clientId}/rotate-secret`, { form: { csrf } });
  t.equal(res.status, 409);
  t.match(res.text, /public client/i);
});
