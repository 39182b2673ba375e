import t, { type Test } from 'tap';
import {
  type OAuthGrantCommand,
  type OAuthGrantEvent,
  OAuthGrantRuleError,
  oauthGrantDecider as decider,
} from '../../src/domain/oauthGrant.ts';
import { redirectUriProblem } from '../../src/domain/oauthClient.ts';
import { foldCost } from '../helpers/foldCost.ts';

const T0 = '2026-01-15T12:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();

/** given / when / then over the pure decider. */
const given = (history: OAuthGrantEvent[]) => ({
  when: (command: OAuthGrantCommand) => decider.decide(command, history.reduce(decider.evolve, decider.initialState())),
});

const consent: OAuthGrantCommand = {
  type: 'GiveConsent',
  data: {
    grantId: 'G',
    clientId: 'C',
    teamId: 'T',
    userId: 'U',
    siteIds: ['S'],
    scopes: ['webhooks:read', 'webhooks:write'],
    resource: 'https://svc.example/mcp',
    code: { codeHash: 'code-hash', redirectUri: 'https://app/cb', codeChallenge: 'challenge' },
    now: T0,
  },
};
const consented = given([]).when(consent);
const redeem = (over: Partial<Extract<OAuthGrantCommand, { type: 'RedeemAuthorizationCode' }>['data']> = {}): OAuthGrantCommand => ({
  type: 'RedeemAuthorizationCode',
  data: {
    codeHash: 'code-hash',
    clientId: 'C',
    redirectUri: 'https://app/cb',
    verifierChallenge: 'challenge',
    resource: null,
    accessToken: { tokenId: 'A1', tokenHash: 'a1' },
    refreshToken: { tokenId: 'R1', tokenHash: 'r1' },
    now: at(10),
    ...over,
  },
});
const refresh = (hash: string, n: number, scopes: string[] | null = null, resource: string | null = null): OAuthGrantCommand => ({
  type: 'RefreshAccessToken',
  data: { refreshTokenHash: hash, clientId: 'C', scopes, resource, accessToken: { tokenId: `A${n}`, tokenHash: `a${n}` }, refreshToken: { tokenId: `R${n}`, tokenHash: `r${n}` }, now: at(100 * n) },
});
function rejects(t: Test, fn: () => unknown, error: string, message: RegExp) {
  try {
    fn();
    t.fail(`expected ${error}`);
  } catch (e) {
    t.ok(e instanceof OAuthGrantRuleError, 'a rule error');
    t.equal((e as OAuthGrantRuleError).error, error);
    t.match((e as Error).message, message);
  }
}

t.test('consent issues a 60-second code', async (t) => {
  t.same(consented.map((e) => e.type), ['ConsentGiven', 'AuthorizationCodeIssued']);
  const code = consented[1]!;
  t.equal(code.type === 'AuthorizationCodeIssued' && code.data.expiresAt, at(60));
});

t.test('redeeming the code', async (t) => {
  const redeemed = given(consented).when(redeem());
  t.same(redeemed.map((e) => e.type), ['AuthorizationCodeRedeemed', 'AccessTokenIssued', 'RefreshTokenIssued']);
  const access = redeemed[1]!;
  t.equal(access.type === 'AccessTokenIssued' && access.data.expiresAt, at(10 + 3600));

  const again = given([...consented, ...redeemed]).when(redeem({ now: at(20) }));
  t.equal(again.length, 1);
  t.equal(again[0]!.type, 'GrantRevoked');
  t.same(again[0]!.type === 'GrantRevoked' && again[0]!.data.tokenIds, ['A1', 'R1'], 'every token issued from the code');

  rejects(t, () => given(consented).when(redeem({ now: at(60) })), 'invalid_grant', /expired/);
  rejects(t, () => given(consented).when(redeem({ verifierChallenge: 'other' })), 'invalid_grant', /code_verifier/);
  rejects(t, () => given(consented).when(redeem({ redirectUri: 'https://app/other' })), 'invalid_grant', /redirect_uri/);
  rejects(t, () => given(consented).when(redeem({ clientId: 'X' })), 'invalid_grant', /another client/);
  rejects(t, () => given(consented).when(redeem({ codeHash: 'nope' })), 'invalid_grant', /invalid/);
});

t.test('refresh rotation and reuse', async (t) => {
  const redeemed = [...consented, ...given(consented).when(redeem())];
  const first = given(redeemed).when(refresh('r1', 2));
  t.same(first.map((e) => e.type), ['RefreshTokenRotated', 'AccessTokenIssued', 'RefreshTokenIssued']);
  const afterFirst = [...redeemed, ...first];
  const reuse = given(afterFirst).when(refresh('r1', 3));
  t.equal(reuse[0]!.type, 'GrantRevoked');
  t.equal(reuse[0]!.type === 'GrantRevoked' && reuse[0]!.data.reason, 'refresh_token_reused');
  t.same(reuse[0]!.type === 'GrantRevoked' && reuse[0]!.data.tokenIds, ['A1', 'A2', 'R2']);
  rejects(t, () => given([...afterFirst, ...reuse]).when(refresh('r2', 4)), 'invalid_grant', /revoked/);

  const narrowed = given(afterFirst).when(refresh('r2', 3, ['webhooks:read']));
  const access = narrowed[1]!;
  const newRefresh = narrowed[2]!;
  t.same(access.type === 'AccessTokenIssued' && access.data.scopes, ['webhooks:read']);
  t.same(newRefresh.type === 'RefreshTokenIssued' && newRefresh.data.scopes, ['webhooks:read', 'webhooks:write'], 'refresh token keeps its scope (RFC 6749 §6)');
  rejects(t, () => given(afterFirst).when(refresh('r2', 3, ['inbox:read'])), 'invalid_scope', /inbox:read/);
});

t.test('a rotated refresh token presented again within REFRESH_TOKEN_REUSE_GRACE_MS refreshes once more; the grace counts from its first rotation', async (t) => {
  const redeemed = [...consented, ...given(consented).when(redeem())];
  const rotate = (hash: string, n: number, seconds: number): OAuthGrantCommand => {
    const c = refresh(hash, n) as Extract<OAuthGrantCommand, { type: 'RefreshAccessToken' }>;
    return { ...c, data: { ...c.data, now: at(seconds) } };
  };
  const first = given(redeemed).when(rotate('r1', 2, 100));
  const afterFirst = [...redeemed, ...first];
  const again = given(afterFirst).when(rotate('r1', 3, 129.9));
  t.same(again.map((e) => e.type), ['RefreshTokenRotated', 'AccessTokenIssued', 'RefreshTokenIssued'], '29.9 s after its rotation: new tokens');
  t.same(again[0]!.type === 'RefreshTokenRotated' && again[0]!.data, { grantId: 'G', tokenId: 'R1', replacedBy: 'R3', rotatedAt: at(129.9) }, 'recorded as one more rotation of the same token');
  const afterAgain = [...afterFirst, ...again];
  t.equal(given(afterAgain).when(rotate('r2', 4, 131))[0]!.type, 'RefreshTokenRotated', 'the first successor refreshes');
  const secondGoesOn = given(afterAgain).when(rotate('r3', 4, 131));
  t.equal(secondGoesOn[0]!.type, 'RefreshTokenRotated', 'or the second, whichever the client kept');
  // The first use of either spends the other: one line of tokens goes on, never two (a stolen token and the client's).
  const afterSecond = [...afterAgain, ...secondGoesOn];
  for (const seconds of [132, 400]) {
    const sibling = given(afterSecond).when(rotate('r2', 5, seconds));
    t.equal(sibling[0]!.type === 'GrantRevoked' && sibling[0]!.data.reason, 'refresh_token_reused', `its sibling presented ${seconds - 131} s later revokes the grant`);
    t.same(sibling[0]!.type === 'GrantRevoked' && sibling[0]!.data.tokenIds, ['A1', 'A2', 'A3', 'A4', 'R4'], 'the sibling is not live any more');
  }
  const reusedParent = given(afterSecond).when(rotate('r1', 5, 129));
  t.equal(reusedParent[0]!.type, 'GrantRevoked', 'within its grace, but a replacement of it has been used: revoked');
  const late = given(afterAgain).when(rotate('r1', 4, 130));
  t.equal(late[0]!.type === 'GrantRevoked' && late[0]!.data.reason, 'refresh_token_reused', '30 s after its first rotation, not its second: the grant is revoked');
  t.same(late[0]!.type === 'GrantRevoked' && late[0]!.data.tokenIds, ['A1', 'A2', 'R2', 'A3', 'R3'], 'with both successors');
});

t.test('a long-lived grant: thousands of rotations', async (t) => {
  // A client refreshing hourly rotates about 8,760 times a year; every refresh folds the grant's stream.
  const historyOf = (rotations: number) => {
    const history: OAuthGrantEvent[] = [...consented, ...given(consented).when(redeem())];
    let state = history.reduce(decider.evolve, decider.initialState());
    for (let n = 2; n <= rotations + 1; n += 1) {
      const events = decider.decide(refresh(`r${n - 1}`, n), state);
      history.push(...events);
      state = events.reduce(decider.evolve, state);
    }
    return history;
  };
  const history = historyOf(3_000);
  const reuse = given(history).when(refresh('r1', 9_999));
  t.equal(reuse[0]!.type === 'GrantRevoked' && reuse[0]!.data.reason, 'refresh_token_reused', 'the first refresh token, rotated 3,000 times since, still counts as reused');
  const tokenIds = reuse[0]!.type === 'GrantRevoked' ? reuse[0]!.data.tokenIds : [];
  t.equal(tokenIds.length, 3_002, 'every access token and the current refresh token');
  t.same([tokenIds[0], tokenIds.at(-2), tokenIds.at(-1)], ['A1', 'A3001', 'R3001'], 'in issue order');
  t.equal(given(history).when(refresh('r3001', 9_999))[0]!.type, 'RefreshTokenRotated', 'the current one refreshes');

  // A rotation costs the same late in a grant's life as early on: copying the token map per event
  // made the fold quadratic (1,000 rotations: 365 ms, 4,000: 6.6 s, on every refresh).
  const long = historyOf(8_000);
  const base = historyOf(0).length;
  const costOf500From = (rotations: number) => foldCost(decider, long, base + 3 * rotations, 3 * 500);
  const early = costOf500From(500);
  const late = costOf500From(7_500);
  t.ok(late < early * 4, `500 rotations after 7,500 fold in ${late.toFixed(2)} ms, after 500 in ${early.toFixed(2)} ms (quadratic: about 15×)`);
});

t.test('the grant is bound to its resource (RFC 8707)', async (t) => {
  const redeemed = given(consented).when(redeem());
  const access = redeemed[1]!;
  t.equal(access.type === 'AccessTokenIssued' && access.data.resource, 'https://svc.example/mcp', 'the token carries the consented resource when the token request names none');
  t.same(given(consented).when(redeem({ resource: 'https://svc.example/mcp' })).map((e) => e.type)[0], 'AuthorizationCodeRedeemed', 'naming the same resource again is fine');
  rejects(t, () => given(consented).when(redeem({ resource: 'https://other.example/mcp' })), 'invalid_target', /svc\.example\/mcp only/);
  const after = [...consented, ...redeemed];
  rejects(t, () => given(after).when(refresh('r1', 2, null, 'https://other.example/')), 'invalid_target', /only/);
  const refreshed = given(after).when(refresh('r1', 2, null, 'https://svc.example/mcp'));
  t.equal(refreshed[1]!.type === 'AccessTokenIssued' && refreshed[1]!.data.resource, 'https://svc.example/mcp');
});

t.test('revocation', async (t) => {
  const redeemed = [...consented, ...given(consented).when(redeem())];
  const one = given(redeemed).when({ type: 'RevokeAccessToken', data: { tokenId: 'A1', now: at(30) } });
  t.same(one.map((e) => e.type), ['TokenRevoked']);
  t.same(given([...redeemed, ...one]).when({ type: 'RevokeAccessToken', data: { tokenId: 'A1', now: at(31) } }), [], 'idempotent');
  const all = given(redeemed).when({ type: 'RevokeGrant', data: { reason: 'client_deleted', now: at(30) } });
  t.equal(all[0]!.type, 'GrantRevoked');
  t.same(given([...redeemed, ...all]).when({ type: 'RevokeGrant', data: { reason: 'client_deleted', now: at(31) } }), []);
});

t.test('redirect URIs', async (t) => {
  t.equal(redirectUriProblem('https://app.example.com/cb'), null);
  t.equal(redirectUriProblem('http://127.0.0.1:8123/cb'), null);
  t.equal(redirectUriProblem('http://localhost/cb'), null);
  t.equal(redirectUriProblem('http://[::1]:9/cb'), null);
  t.match(redirectUriProblem('http://example.com/cb'), /HTTPS/);
  t.match(redirectUriProblem('https://app.example.com/cb#frag'), /fragment/);
  t.match(redirectUriProblem('https://user:pw@app.example.com/cb'), /credentials/);
  t.match(redirectUriProblem('javascript:alert(1)'), /HTTPS/);
  t.match(redirectUriProblem('/relative'), /absolute/);
});
