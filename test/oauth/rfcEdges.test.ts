import t from 'tap';
import { redirectUriRegistered } from '../../src/http/oauth/authorize.ts';
import { clientDocument, startDocumentServer, startMcpApp } from '../mcp/helpers.ts';
import { createTenant } from '../helpers/testApp.ts';
import { Browser, addTeamUser, authorizeUrl, formFields, pkce, registerClient, tokenRequest } from './helpers.ts';

/** The authorization endpoint at the edges of the RFCs a real client relies on. */
const docs = await startDocumentServer();
t.teardown(() => docs.close());
const ctx = await startMcpApp();
t.teardown(() => ctx.app.close());
const { app, tenant, base, browser } = ctx;

t.test('RFC 8252 §7.3: a loopback redirect URI over http may use any port at request time; the token request repeats it', async (t) => {
  const client = await registerClient(app, tenant, 'none', ['http://127.0.0.1:8765/callback']);
  const { verifier, challenge } = pkce();
  const redirectUri = 'http://127.0.0.1:53999/callback';
  const url = authorizeUrl(base, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: challenge, redirect_uri: redirectUri });
  t.equal((await browser.request(url)).status, 200, 'the consent screen, for the port the app listens on now');
  const answer = await browser.consent(url, 'approve', [tenant.siteId]);
  t.equal(new URL(answer.location!).port, '53999', 'the code goes to that port');
  const code = new URL(answer.location!).searchParams.get('code')!;
  const otherPort = await tokenRequest(base, { grant_type: 'authorization_code', client_id: client.clientId, code, redirect_uri: 'http://127.0.0.1:8765/callback', code_verifier: verifier });
  t.equal(otherPort.status, 400, 'the token request must name the port the code went to');

  const again = pkce();
  const url2 = authorizeUrl(base, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: again.challenge, redirect_uri: redirectUri });
  const code2 = new URL((await browser.consent(url2, 'approve', [tenant.siteId])).location!).searchParams.get('code')!;
  const samePort = await tokenRequest(base, { grant_type: 'authorization_code', client_id: client.clientId, code: code2, redirect_uri: redirectUri, code_verifier: again.verifier });
  t.equal(samePort.status, 200, 'with the port the code went to, the code is redeemed');
});

t.test('RFC 8252 §7.3 only for loopback IP literals over http: the rest is compared exactly', async (t) => {
  t.ok(redirectUriRegistered(['http://[::1]:1/cb'], 'http://[::1]:4242/cb'), 'IPv6 loopback');
  t.notOk(redirectUriRegistered(['http://127.0.0.1:1/cb'], 'http://127.0.0.1:2/other'), 'another path');
  t.notOk(redirectUriRegistered(['http://127.0.0.1:1/cb?x=1'], 'http://127.0.0.1:2/cb?x=2'), 'another query');
  t.notOk(redirectUriRegistered(['https://app.example/cb'], 'https://app.example:8443/cb'), 'not loopback');
  t.notOk(redirectUriRegistered(['http://localhost:1/cb'], 'http://localhost:2/cb'), 'a name, not an IP literal');
  t.notOk(redirectUriRegistered(['http://127.0.0.1:1/cb'], 'http://[::1]:1/cb'), 'another loopback address');
  t.notOk(redirectUriRegistered(['https://127.0.0.1:1/cb'], 'http://127.0.0.1:1/cb'), 'another scheme');
  t.ok(redirectUriRegistered(['http://127.0.0.1/cb'], 'http://127.0.0.1:5/cb'), 'a port where none was registered');
  // Only the port may differ: every other character as registered.
  for (const other of [
    'http://evil@127.0.0.1:1/callback',
    'http://u:p@127.0.0.1/callback',
    'http://127.1:1/callback',
    'http://2130706433:1/callback',
    'http://127.0.0.1.:1/callback',
    'http://[0:0:0:0:0:0:0:1]:5/callback',
    'http://127.0.0.1:1/x/../callback',
    'HTTP://127.0.0.1:1/callback',
    'http://127.0.0.1:1/callback?',
    'http://127.0.0.1:1/callback#',
    'http://127.0.0.1:1/callback\n',
    ' http://127.0.0.1:1/callback',
    'http://127.0.0.1:99999/callback',
  ]) {
    t.notOk(redirectUriRegistered(['http://127.0.0.1:8765/callback', 'http://[::1]:8765/callback'], other), JSON.stringify(other));
  }
});

t.test('a registered redirect URI with an international host or path: the browser is sent there, encoded', async (t) => {
  const registered = 'https://例え.example/日本/cb';
  const client = await registerClient(app, tenant, 'none', [registered]);
  const { challenge } = pkce();
  const answer = await browser.consent(authorizeUrl(base, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: challenge, redirect_uri: registered }), 'approve', [tenant.siteId]);
  t.equal(answer.status, 303);
  t.match(answer.location, /^https:\/\/xn--r8jz45g\.example\/%E6%97%A5%E6%9C%AC\/cb\?code=/);
});

t.test('RFC 9700 §4.11.2: an invalid request of a client nobody vouched for is shown here, never redirected', async (t) => {
  const clientId = docs.serve('/phish.json', (origin) => ({ body: clientDocument(origin + '/phish.json', { redirect_uris: ['https://evil.example/login'] }) }));
  const url = new URL('/oauth/authorize', base);
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', 'https://evil.example/login');
  url.searchParams.set('response_type', 'x');
  const res = await new Browser(base).request(url.toString());
  t.equal(res.status, 400, 'an error page, signed out or not');
  t.notOk(res.location, 'no redirect off the authorization server');
  t.match(res.text, /unsupported_response_type/);

  const own = await registerClient(app, tenant, 'none', ['https://app.example.test/cb']);
  const ownUrl = new URL('/oauth/authorize', base);
  ownUrl.searchParams.set('client_id', own.clientId);
  ownUrl.searchParams.set('redirect_uri', 'https://app.example.test/cb');
  ownUrl.searchParams.set('response_type', 'x');
  ownUrl.searchParams.set('state', 's1');
  const ownAnswer = await browser.request(ownUrl.toString());
  t.equal(ownAnswer.status, 303, "a team's own app still gets the error at its redirect URI, for its team's signed-in people");
  t.match(ownAnswer.location, /^https:\/\/app\.example\.test\/cb\?error=unsupported_response_type&.*state=s1/);
  // From a dashboard audit: any team's admin registers any URI, so the URI is vouched for only to that team's people.
  const signedOut = await new Browser(base).request(ownUrl.toString());
  t.equal(signedOut.status, 400, 'signed out: the error page, no redirect (this origin is no open redirector)');
  t.notOk(signedOut.location);
  const other = await createTenant(app.services);
  const otherEmail = await addTeamUser(app, other.teamId, 'owner');
  const otherBrowser = new Browser(base);
  t.equal((await otherBrowser.signIn(otherEmail)).status, 303);
  const otherAnswer = await otherBrowser.request(ownUrl.toString());
  t.equal(otherAnswer.status, 400, "another team's person: the error page");
  t.notOk(otherAnswer.location);
  // A valid request of that app, by another team's person: refused, with no button back to the app's URI either.
  const valid = await otherBrowser.request(authorizeUrl(base, { client_id: own.clientId, scope: 'webhooks:read', code_challenge: pkce().challenge, redirect_uri: 'https://app.example.test/cb' }));
  t.equal(valid.status, 403);
  t.match(valid.text, /registered by another team/);
  t.notMatch(valid.text, /name="decision"/, 'no form that would send the browser there');
});

t.test('RFC 6749 §3.1.2: the registered redirect URI keeps its query as written when code, state and iss are added', async (t) => {
  const registered = 'https://app.example.test/cb?flag&tenant=a%20b';
  const client = await registerClient(app, tenant, 'none', [registered]);
  const { challenge } = pkce();
  const answer = await browser.consent(authorizeUrl(base, { client_id: client.clientId, scope: 'webhooks:read', code_challenge: challenge, redirect_uri: registered }), 'approve', [tenant.siteId]);
  t.equal(answer.status, 303);
  t.ok(answer.location!.startsWith(`${registered}&code=`), `the query kept verbatim: ${answer.location}`);
  t.match(new URL(answer.location!).searchParams.get('iss'), base);
});

t.test('RFC 9110 §15.5.6: another method than POST on the token and revocation endpoints is 405 with Allow (it was 404)', async (t) => {
  t.equal((await fetch(`${base}/oauth/register`)).status, 404, 'registration is off here: no such endpoint');
  for (const path of ['/oauth/token', '/oauth/revoke']) {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${base}${path}`, { method });
      t.equal(res.status, 405, `${method} ${path}`);
      t.equal(res.headers.get('allow'), 'POST, OPTIONS');
      t.match(await res.json(), { error: 'invalid_request' });
    }
  }
});

t.test('OAuth 2.1 §4.1.1: redirect_uri may be left out when the app registered exactly one; the token request then leaves it out too (RFC 6749 §4.1.3)', async (t) => {
  const one = await registerClient(app, tenant, 'none', ['https://one.example.test/cb']);
  const flow = async (redirectUri: string | undefined) => {
    const { verifier, challenge } = pkce();
    const url = authorizeUrl(base, { client_id: one.clientId, scope: 'webhooks:read', code_challenge: challenge, redirect_uri: redirectUri });
    const answer = await browser.consent(url, 'approve', [tenant.siteId]);
    return { answer, verifier };
  };
  const omitted = await flow(undefined);
  t.equal(omitted.answer.status, 303, 'the consent screen and the decision, with no redirect_uri (it was refused with a page)');
  const to = new URL(omitted.answer.location!);
  t.equal(`${to.origin}${to.pathname}`, 'https://one.example.test/cb', 'the code goes to the one registered URI');
  const token = await tokenRequest(base, { grant_type: 'authorization_code', client_id: one.clientId, code: to.searchParams.get('code')!, code_verifier: omitted.verifier });
  t.equal(token.status, 200, 'redeemed without redirect_uri');

  const named = await flow('https://one.example.test/cb');
  const code = new URL(named.answer.location!).searchParams.get('code')!;
  const without = await tokenRequest(base, { grant_type: 'authorization_code', client_id: one.clientId, code, code_verifier: named.verifier });
  t.equal(without.status, 400, 'a code whose request named redirect_uri needs it at the token endpoint');
  t.match(without.json, { error: 'invalid_grant', error_description: /redirect_uri is required/ });

  // The decision goes where the consent page said: a changed URI under the marker is refused (a metadata document may change meanwhile).
  const { challenge } = pkce();
  const consentPage = await browser.request(authorizeUrl(base, { client_id: one.clientId, scope: 'webhooks:read', code_challenge: challenge, redirect_uri: undefined }));
  const fields = formFields(consentPage.text, '/oauth/authorize');
  t.equal(fields.redirect_uri, 'https://one.example.test/cb', 'the form carries the URI the page shows');
  t.equal(fields.redirect_uri_omitted, '1', 'marked as not named by the app');
  const swapped = await browser.request('/oauth/authorize', { form: { ...fields, redirect_uri: 'https://elsewhere.example.test/cb', decision: 'approve', site_ids: [tenant.siteId] } });
  t.equal(swapped.status, 400);
  t.match(swapped.text, /changed while you decided/);

  const loopback = await registerClient(app, tenant, 'none', ['http://127.0.0.1/callback']);
  const noPort = await browser.request(authorizeUrl(base, { client_id: loopback.clientId, scope: 'webhooks:read', code_challenge: pkce().challenge, redirect_uri: undefined }));
  t.equal(noPort.status, 400, 'a loopback URI leaves its port to the request: it must be named (RFC 6749 §3.1.2.3)');
  t.match(noPort.text, /loopback/);

  const two = await registerClient(app, tenant, 'none', ['https://two.example.test/a', 'https://two.example.test/b']);
  const page = await browser.request(authorizeUrl(base, { client_id: two.clientId, scope: 'webhooks:read', code_challenge: pkce().challenge, redirect_uri: undefined }));
  t.equal(page.status, 400, 'an app with several registered URIs must name one');
  t.match(page.text, /registered several/);
});
