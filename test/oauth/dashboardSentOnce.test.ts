import t, { type Test } from 'tap';
import { listApiKeysOfTeam } from '../../src/readModels/apiKeys.ts';
import { Browser, basicAuth, formFields, startOAuthApp, tokenRequest } from './helpers.ts';

/**
 * The pages that show a new secret answer the form's POST; reloading one posts the form again. That
 * made a second API key, app or subscription, and rotated a secret again, killing the one just copied
 * (an OAuth app's old secret stops at once). A form's second sending now does nothing and says so.
 */
const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
t.teardown(() => app.close());
const browser = new Browser(issuer);
if ((await browser.signIn(ownerEmail)).status !== 303) throw new Error('sign-in failed');

const sentAgain = (t: Test, res: { status: number; text: string }, what: RegExp) => {
  t.equal(res.status, 409, 'the second sending: 409');
  t.match(res.text, /This form was already sent/);
  t.match(res.text, what);
};

t.test('an API key form sent twice makes one key', async (t) => {
  const fields = formFields((await browser.request('/dashboard/api-keys')).text, '/dashboard/api-keys');
  t.match(fields.once, /^[A-Za-z0-9_-]{22}$/, 'the form carries its own value');
  const form = { ...fields, name: 'reloaded', scopes: ['webhooks:read'] };
  const first = await browser.request('/dashboard/api-keys', { form });
  t.equal(first.status, 201);
  sentAgain(t, await browser.request('/dashboard/api-keys', { form }), /the key was created then/);
  const keys = (await listApiKeysOfTeam(app.services.readModels, tenant.teamId)).filter((k) => k.name === 'reloaded');
  t.equal(keys.length, 1, 'one key');
  const next = formFields((await browser.request('/dashboard/api-keys')).text, '/dashboard/api-keys');
  t.not(next.once, fields.once, 'the page shown again carries a new value');
  t.equal((await browser.request('/dashboard/api-keys', { form: { ...next, name: 'second', scopes: ['webhooks:read'] } })).status, 201, 'a new form makes a new key');
});

t.test("an OAuth app's secret rotated from a reloaded page: the secret shown first keeps working", async (t) => {
  const fields = formFields((await browser.request('/dashboard/oauth-apps')).text, '/dashboard/oauth-apps');
  const form = { ...fields, name: 'CRM', redirect_uris: 'https://crm.example.test/cb', token_endpoint_auth_method: 'client_secret_basic' };
  const made = await browser.request('/dashboard/oauth-apps', { form });
  t.equal(made.status, 201);
  const clientId = /id="client_id">([^<]+)</.exec(made.text)![1]!;
  sentAgain(t, await browser.request('/dashboard/oauth-apps', { form }), /the app was registered then/);
  const rotateAction = `/dashboard/oauth-apps/${clientId}/rotate-secret`;
  const rotateForm = formFields((await browser.request('/dashboard/oauth-apps')).text, rotateAction);
  const rotated = await browser.request(rotateAction, { form: rotateForm });
  t.equal(rotated.status, 200);
  const secret = /id="client_secret">([^<]+)</.exec(rotated.text)![1]!;
  sentAgain(t, await browser.request(rotateAction, { form: rotateForm }), /the secret was rotated then/);
  const refresh = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: 'none-issued' }, basicAuth(clientId, secret));
  t.not(refresh.json.error, 'invalid_client', 'the client authenticates with the secret shown (the grant itself is refused)');
});

t.test('a webhook subscription created and its secret rotated from reloaded pages: one subscription, one rotation', async (t) => {
  const createAction = `/dashboard/sites/${tenant.siteId}/webhooks`;
  const fields = formFields((await browser.request('/dashboard/webhooks')).text, createAction);
  const form = { ...fields, label: 'crm', url: 'https://hooks.example.com/a', event_types: 'outreach.reply_sent' };
  t.equal((await browser.request(createAction, { form })).status, 201);
  sentAgain(t, await browser.request(createAction, { form }), /the subscription was created then/);
  const page = (await browser.request('/dashboard/webhooks')).text;
  const id = /action="\/dashboard\/webhooks\/([0-9A-Z]{26})\/rotate"/.exec(page)![1]!;
  t.equal([...page.matchAll(/action="\/dashboard\/webhooks\/[0-9A-Z]{26}\/rotate"/g)].length, 1, 'one subscription');
  const rotateAction = `/dashboard/webhooks/${id}/rotate`;
  const rotateForm = { ...formFields(page, rotateAction), grace_seconds: '0' };
  t.equal((await browser.request(rotateAction, { form: rotateForm })).status, 200);
  sentAgain(t, await browser.request(rotateAction, { form: rotateForm }), /the secret was rotated then/);
  const rotations = (await app.services.events.readAll({ limit: 100_000 })).filter((e) => e.type === 'SubscriptionSecretRotated');
  t.equal(rotations.length, 1, 'one rotation recorded');
});

t.test('a sending the command refused is forgotten: the same form, corrected, goes through once', async (t) => {
  const fields = formFields((await browser.request('/dashboard/oauth-apps')).text, '/dashboard/oauth-apps');
  const refused = await browser.request('/dashboard/oauth-apps', { form: { ...fields, name: 'Fixed', redirect_uris: 'http://plain.example.test/cb', token_endpoint_auth_method: 'none' } });
  t.equal(refused.status, 400);
  t.match(refused.text, /must use HTTPS/);
  const form = { ...fields, name: 'Fixed', redirect_uris: 'https://fixed.example.test/cb', token_endpoint_auth_method: 'none' };
  t.equal((await browser.request('/dashboard/oauth-apps', { form })).status, 201, 'corrected: registered');
  sentAgain(t, await browser.request('/dashboard/oauth-apps', { form }), /the app was registered then/);
});

t.test('a subscription refused at the limit is forgotten too: the same form goes through once one is deleted', async (t) => {
  const capped = await startOAuthApp({ env: { WEBHOOK_MAX_SUBSCRIPTIONS_PER_SITE: '1' } });
  t.teardown(() => capped.app.close());
  const owner = new Browser(capped.issuer);
  t.equal((await owner.signIn(capped.ownerEmail)).status, 303);
  const createAction = `/dashboard/sites/${capped.tenant.siteId}/webhooks`;
  const formOf = async () => ({ ...formFields((await owner.request('/dashboard/webhooks')).text, createAction), label: 'crm', url: 'https://hooks.example.com/a', event_types: 'outreach.reply_sent' });
  t.equal((await owner.request(createAction, { form: await formOf() })).status, 201, 'the one allowed');
  const second = await formOf();
  const refused = await owner.request(createAction, { form: second });
  t.equal(refused.status, 409);
  t.match(refused.text, /at most 1 webhook subscriptions/);
  const page = (await owner.request('/dashboard/webhooks')).text;
  const id = /action="\/dashboard\/webhooks\/([0-9A-Z]{26})\/delete"/.exec(page)![1]!;
  t.equal((await owner.request(`/dashboard/webhooks/${id}/delete`, { form: formFields(page, `/dashboard/webhooks/${id}/delete`) })).status, 303);
  t.equal((await owner.request(createAction, { form: second })).status, 201, 'the refused form, sent again: created (it was "already sent")');
});

t.test('a form without the value (a page loaded before it existed, a hand-made request) is taken as a first sending', async (t) => {
  const { once: _once, ...fields } = formFields((await browser.request('/dashboard/api-keys')).text, '/dashboard/api-keys');
  for (const name of ['hand-1', 'hand-2']) t.equal((await browser.request('/dashboard/api-keys', { form: { ...fields, name, scopes: ['webhooks:read'] } })).status, 201, name);
});
