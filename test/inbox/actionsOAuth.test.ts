import t from 'tap';
import { conversationStream } from '../../src/domain/conversation.ts';
import { anotherSite, expectError } from '../helpers/http.ts';
import { PITCH, ingest } from '../ingestion/helpers.ts';
import { Browser, obtainCode, registerClient, startOAuthApp, tokenRequest } from '../oauth/helpers.ts';
import { ACTIONS, act } from './actionsHelpers.ts';

// The conversation actions with OAuth access tokens obtained through the real code flow.
const { app, tenant: a, ownerEmail, issuer } = await startOAuthApp();
t.teardown(() => app.close());
const second = await anotherSite(app.services, a.teamId, 'granted.example.test');
const client = await registerClient(app, a, 'none');
const browser = new Browser(issuer);
t.equal((await browser.signIn(ownerEmail)).status, 303);

async function tokenFor(siteIds: string[], scope: string): Promise<string> {
  const code = await obtainCode(browser, issuer, client, siteIds, { scope });
  const tokens = await tokenRequest(issuer, { grant_type: 'authorization_code', client_id: client.clientId, code: code.code, redirect_uri: code.redirectUri, code_verifier: code.verifier });
  if (tokens.status !== 200) throw new Error(`token request failed: ${tokens.status} ${JSON.stringify(tokens.json)}`);
  return tokens.json.access_token as string;
}

async function conversationOn(siteId: string, messageId: string): Promise<string> {
  const res = await ingest(app.fastify, { siteId, key: a.key }, { ...PITCH, messageId });
  if (res.statusCode !== 201) throw new Error(`ingestion failed: ${res.statusCode} ${res.body}`);
  return res.json().conversationIds[0];
}

t.test('an OAuth token without the site in its grant gets 404 SITE_NOT_FOUND on every action; on its site it acts', async (t) => {
  const onA = await conversationOn(a.siteId, '<oauth-actions-1@prospect.io>');
  const onSecond = await conversationOn(second, '<oauth-actions-2@prospect.io>');
  const token = await tokenFor([second], 'inbox:read inbox:write');
  for (const action of ACTIONS) {
    expectError(t, await act(app.fastify, { siteId: a.siteId, key: token }, onA, action), 404, 'SITE_NOT_FOUND', `${action}: site outside the grant`);
    expectError(t, await act(app.fastify, { siteId: second, key: token }, onA, action), 404, 'NOT_FOUND', `${action}: the granted site, another site's conversation`);
  }
  t.same((await app.services.events.readStream(conversationStream(onA))).length, 0, 'nothing was recorded');
  const res = await act(app.fastify, { siteId: second, key: token }, onSecond, 'takeover');
  t.equal(res.statusCode, 200, 'the granted site');
  t.equal(res.json().conversation.handledBy, 'human');
});

t.test('an OAuth token granted inbox:read only gets 403 INSUFFICIENT_SCOPE on every action', async (t) => {
  const onA = await conversationOn(a.siteId, '<oauth-actions-3@prospect.io>');
  const token = await tokenFor([a.siteId], 'inbox:read');
  for (const action of ACTIONS) {
    const res = await act(app.fastify, { siteId: a.siteId, key: token }, onA, action);
    expectError(t, res, 403, 'INSUFFICIENT_SCOPE', action);
    t.match(res.json().error.message, /inbox:write/);
  }
  t.same((await app.services.events.readStream(conversationStream(onA))).length, 0, 'nothing was recorded');
});
