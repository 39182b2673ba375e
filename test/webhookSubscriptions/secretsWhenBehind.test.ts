import t from 'tap';
import { expectError, validBody, webhooksPath } from '../helpers/http.ts';
import { registerOAuthClientDynamically } from '../../src/commands/oauth.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { Browser, formFields, obtainCode, startOAuthApp, tokenRequest } from '../oauth/helpers.ts';

/**
 * A write whose answer carries a secret shown once (a signing secret, tokens) is answered
 * even when the read models are behind: a 503 would lose the secret while the write stands. Other writes still answer 503 then (the write stands; it shows up shortly).
 */
const app = await startTestApp({ env: { READ_YOUR_WRITES_TIMEOUT_MS: '50' } });
t.teardown(() => app.close());
const tenant = await createTenant(app.services);
const auth = bearer(tenant.key);
const created = await app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: auth, payload: validBody({ label: 'existing' }) });
const existingId = created.json().subscription.id as string;

/** The read models stop catching up while `fn` runs. */
async function behind<T>(fn: () => Promise<T>): Promise<T> {
  const projections = app.fastify.projections;
  const waitFor = projections.waitFor;
  projections.waitFor = async () => false;
  try {
    return await fn();
  } finally {
    projections.waitFor = waitFor;
  }
}

t.test('create and rotate answer with the secret; a delete answers 503', async (t) => {
  const create = await behind(() => app.fastify.inject({ method: 'POST', url: webhooksPath(tenant.siteId), headers: auth, payload: validBody({ label: 'new' }) }));
  t.equal(create.statusCode, 201, create.body);
  t.match(create.json().secret, /^\S{20,}$/);
  const rotate = await behind(() =>
    app.fastify.inject({ method: 'POST', url: `${webhooksPath(tenant.siteId)}/${existingId}/rotate-secret`, headers: auth, payload: { graceSeconds: 0 } }),
  );
  t.equal(rotate.statusCode, 200, rotate.body);
  t.match(rotate.json().secret, /^\S{20,}$/);
  t.equal(rotate.json().subscription.secret_prefix, `${rotate.json().secret.slice(0, 11)}…`, 'the answer names the new secret, not what the read model still holds');
  const remove = await behind(() => app.fastify.inject({ method: 'DELETE', url: `${webhooksPath(tenant.siteId)}/${create.json().subscription.id}`, headers: auth }));
  expectError(t, remove, 503, 'SERVICE_UNAVAILABLE', 'no secret in the answer: the usual 503');
});

t.test('the dashboard answers with a new API key', async (t) => {
  const oauth = await startOAuthApp();
  t.teardown(() => oauth.app.close());
  const browser = new Browser(oauth.issuer);
  t.equal((await browser.signIn(oauth.ownerEmail)).status, 303);
  const page = await browser.request('/dashboard/api-keys');
  const csrf = formFields(page.text, '/dashboard/api-keys').csrf!;
  const projections = oauth.app.fastify.projections;
  const waitFor = projections.waitFor;
  projections.waitFor = async () => false;
  try {
    const created = await browser.request('/dashboard/api-keys', { form: { csrf, name: 'zapier', scopes: ['webhooks:read'] } });
    t.equal(created.status, 201, created.text.slice(0, 300));
    t.match(created.text, /svc_[0-9a-f]{64}/, 'the key, shown once');
  } finally {
    projections.waitFor = waitFor;
  }
});

t.test('the token endpoint answers with the tokens (a refresh token used is gone: a 503 would lock the client out)', async (t) => {
  const oauth = await startOAuthApp();
  t.teardown(() => oauth.app.close());
  const client = await registerOAuthClientDynamically(oauth.app.services, { name: 'Desk', redirectUris: ['https://app.example.test/callback'], clientUri: null });
  await oauth.app.services.projections.waitFor(client.position!, 5_000);
  const owner = new Browser(oauth.issuer);
  t.equal((await owner.signIn(oauth.ownerEmail)).status, 303);
  const { code, verifier, redirectUri } = await obtainCode(owner, oauth.issuer, client, [oauth.tenant.siteId]);
  const projections = oauth.app.fastify.projections;
  const waitFor = projections.waitFor;
  (oauth.app.services.config as { READ_YOUR_WRITES_TIMEOUT_MS: number }).READ_YOUR_WRITES_TIMEOUT_MS = 50;
  projections.waitFor = async () => false;
  try {
    const first = await tokenRequest(oauth.issuer, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client.clientId });
    t.equal(first.status, 200, JSON.stringify(first.json));
    const refreshed = await tokenRequest(oauth.issuer, { grant_type: 'refresh_token', refresh_token: String(first.json.refresh_token), client_id: client.clientId });
    t.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
    t.type(refreshed.json.refresh_token, 'string');
  } finally {
    projections.waitFor = waitFor;
  }
});
