import * as oauth from 'oauth4webapi';
import t from 'tap';
import type { TokenEndpointAuthMethod } from '../../src/domain/oauthClient.ts';
import { Browser, registerClient, startOAuthApp } from './helpers.ts';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

/**
 * The whole Authorization Code + PKCE flow driven by oauth4webapi (plain OAuth 2 mode, metadata
 * discovered from the service on a real port), for each client type, then a refresh and API calls.
 */
t.test('code flow with oauth4webapi for every client type', async (t) => {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const browser = new Browser(issuer);
  const signIn = await browser.signIn(ownerEmail);
  t.equal(signIn.status, 303, 'signed in');

  const issuerUrl = new URL(issuer);
  const as = await oauth.processDiscoveryResponse(issuerUrl, await oauth.discoveryRequest(issuerUrl, { algorithm: 'oauth2', ...insecure }));
  t.equal(as.issuer, issuer);
  t.same(as.code_challenge_methods_supported, ['S256']);
  t.same(as.response_types_supported, ['code']);
  t.equal(as.authorization_response_iss_parameter_supported, true);
  t.equal(as.revocation_endpoint, `${issuer}/oauth/revoke`);

  const methods: TokenEndpointAuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post'];
  for (const method of methods) {
    await t.test(method, async (t) => {
      const registered = await registerClient(app, tenant, method);
      const client: oauth.Client = { client_id: registered.clientId, token_endpoint_auth_method: method };
      const clientAuth =
        method === 'none'
          ? oauth.None()
          : method === 'client_secret_basic'
            ? oauth.ClientSecretBasic(registered.clientSecret!)
            : oauth.ClientSecretPost(registered.clientSecret!);
      const redirectUri = 'https://app.example.test/callback';
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.searchParams.set('client_id', client.client_id);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('scope', 'webhooks:read webhooks:write');
      url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
      url.searchParams.set('code_challenge_method', 'S256');
      url.searchParams.set('state', state);

      const consent = await browser.consent(url.toString(), 'approve', [tenant.siteId]);
      t.equal(consent.status, 303);
      const callback = new URL(consent.location!);
      t.equal(callback.origin + callback.pathname, redirectUri);
      t.equal(callback.searchParams.get('iss'), issuer, 'RFC 9207 iss');
      const params = oauth.validateAuthResponse(as, client, callback, state);

      const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, insecure);
      t.equal(response.headers.get('cache-control'), 'no-store');
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
      t.match(tokens.access_token, /^svc_oauth_/);
      t.equal(tokens.token_type, 'bearer');
      t.equal(tokens.expires_in, 3600);
      t.equal(tokens.scope, 'webhooks:read webhooks:write');
      t.ok(tokens.refresh_token);

      // An API call with the token: the subscription carries the client id.
      const created = await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ label: `via ${method}`, url: 'https://hooks.example.com/in', eventTypes: ['outreach.reply_sent'] }),
      });
      t.equal(created.status, 201);
      const body = (await created.json()) as { subscription: { id: string; created_by_oauth_client_id: string | null } };
      t.equal(body.subscription.created_by_oauth_client_id, client.client_id);

      // Refresh: rotates the refresh token, and the new access token works.
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, insecure),
      );
      t.not(refreshed.refresh_token, tokens.refresh_token, 'refresh token rotated');
      t.not(refreshed.access_token, tokens.access_token);
      const list = await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
      t.equal(list.status, 200);
      const listed = (await list.json()) as { subscriptions: Array<{ id: string; created_by_oauth_client_id: string | null }> };
      t.equal(listed.subscriptions.find((s) => s.id === body.subscription.id)?.created_by_oauth_client_id, client.client_id);

      // Narrowing the scope on refresh is allowed.
      const narrowed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshed.refresh_token!, { ...insecure, additionalParameters: { scope: 'webhooks:read' } }),
      );
      t.equal(narrowed.scope, 'webhooks:read');
      const denied = await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${narrowed.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'x', url: 'https://hooks.example.com/in', eventTypes: ['outreach.reply_sent'] }),
      });
      t.equal(denied.status, 403, 'narrowed token lacks webhooks:write');

      // RFC 7009 revocation of the access token.
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, narrowed.access_token, insecure));
      const afterRevoke = await fetch(`${issuer}/api/v1/sites/${tenant.siteId}/outreach/webhooks`, { headers: { authorization: `Bearer ${narrowed.access_token}` } });
      t.equal(afterRevoke.status, 401);
    });
  }
});

t.test('the metadata document (RFC 8414)', async (t) => {
  const { app, issuer } = await startOAuthApp();
  t.teardown(() => app.close());
  const res = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
  t.equal(res.status, 200);
  const m = (await res.json()) as Record<string, unknown>;
  t.equal(m.issuer, issuer);
  t.equal(m.authorization_endpoint, `${issuer}/oauth/authorize`);
  t.equal(m.token_endpoint, `${issuer}/oauth/token`);
  t.equal(m.revocation_endpoint, `${issuer}/oauth/revoke`);
  t.same(m.response_types_supported, ['code']);
  t.same(m.grant_types_supported, ['authorization_code', 'refresh_token']);
  t.same(m.code_challenge_methods_supported, ['S256']);
  t.same(m.token_endpoint_auth_methods_supported, ['none', 'client_secret_basic', 'client_secret_post']);
  t.ok((m.scopes_supported as string[]).includes('inbox:read'));
  t.equal(m.authorization_response_iss_parameter_supported, true);
});
