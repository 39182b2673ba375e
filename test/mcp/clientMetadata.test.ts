import { readFileSync } from 'node:fs';
import t from 'tap';
import { ClientMetadataFetcher } from '../../src/adapters/http/clientMetadataFetcher.ts';
import { clientIdUrlProblem, parseClientMetadataDocument } from '../../src/domain/clientMetadataDocument.ts';
import { parseAllowedRanges } from '../../src/domain/destination.ts';
import { authorizeUrl, pkce, tokenRequest } from '../oauth/helpers.ts';
import { testCertificate } from '../webhooks/helpers.ts';
import { REDIRECT_URI, clientDocument, startDocumentServer, startMcpApp } from './helpers.ts';

const docs = await startDocumentServer();
t.teardown(() => docs.close());
const extraCa = readFileSync((await testCertificate()).caFile, 'utf8');
let now = Date.parse('2026-01-15T12:00:00Z');
const fetcher = (allowed = '127.0.0.1/32') =>
  new ClientMetadataFetcher({ allowed: parseAllowedRanges(allowed), extraCa, timeoutMs: 5_000, now: () => now, minTtlSeconds: 60, maxTtlSeconds: 3600 });
const good = fetcher();
t.teardown(() => good.close());

const serveGood = (path: string, headers: Record<string, string> = {}) => docs.serve(path, (origin) => ({ body: clientDocument(origin + path), headers }));

t.test('client_id URLs: https, a path, no fragment, credentials or dot segments', async (t) => {
  t.equal(clientIdUrlProblem('https://app.example.com/oauth/client.json'), null);
  t.match(clientIdUrlProblem('http://app.example.com/client.json'), /https/);
  t.match(clientIdUrlProblem('https://app.example.com/'), /path/);
  t.match(clientIdUrlProblem('https://app.example.com/a#b'), /fragment/);
  t.match(clientIdUrlProblem('https://u:p@app.example.com/a'), /credentials/);
  t.match(clientIdUrlProblem('https://app.example.com/a/../b'), /\. or \.\. path segments/);
  t.match(clientIdUrlProblem('not a url'), /not a valid URL/);
});

t.test('documents: client_id must be the URL, public, with usable redirect URIs', async (t) => {
  const url = 'https://app.example.com/client.json';
  const parsed = parseClientMetadataDocument(url, clientDocument(url));
  t.same(parsed, { client: { clientId: url, name: 'Desktop Assistant', host: 'app.example.com', redirectUris: [REDIRECT_URI], clientUri: null } });
  t.match(parseClientMetadataDocument(url, clientDocument('https://evil.example.com/client.json')), { problem: /client_id is not the URL/ });
  t.match(parseClientMetadataDocument(url, clientDocument(url, { token_endpoint_auth_method: 'client_secret_basic' })), { problem: /none/ });
  t.match(parseClientMetadataDocument(url, clientDocument(url, { client_secret: 'x' })), { problem: /client_secret/ });
  t.match(parseClientMetadataDocument(url, clientDocument(url, { redirect_uris: [] })), { problem: /redirect_uris/ });
  t.match(parseClientMetadataDocument(url, clientDocument(url, { redirect_uris: ['http://evil.example/cb'] })), { problem: /HTTPS/ });
  t.match(parseClientMetadataDocument(url, [1]), { problem: /JSON object/ });
  // A name the consent page shows: one line, no override that makes "\u202EelgooG" read "Google".
  for (const name of ['\u202EelgooG', 'Evil\nApp', 'bell\u0007']) {
    t.match(parseClientMetadataDocument(url, clientDocument(url, { client_name: name })), { problem: /client_name must be one line of text/ }, JSON.stringify(name));
  }
  const unnamed = parseClientMetadataDocument(url, clientDocument(url, { client_name: undefined }));
  t.equal('client' in unnamed && unnamed.client.name, 'app.example.com', 'no client_name: the host is the name');
});

t.test('the fetcher: SSRF refusals, HTTP refusals, size, caching', async (t) => {
  const ok = serveGood('/ok.json', { 'cache-control': 'max-age=120' });
  t.match(await good.load(ok), { clientId: ok, name: 'Desktop Assistant' });
  t.equal(docs.fetches.get('/ok.json'), 1);
  await good.load(ok);
  t.equal(docs.fetches.get('/ok.json'), 1, 'cached for max-age');
  now += 121_000;
  await good.load(ok);
  t.equal(docs.fetches.get('/ok.json'), 2, 'fetched again once max-age passed');

  const noStore = serveGood('/no-store.json', { 'cache-control': 'no-store' });
  await good.load(noStore);
  await good.load(noStore);
  t.equal(docs.fetches.get('/no-store.json'), 2, 'no-store is not cached');
  const short = serveGood('/short.json', { 'cache-control': 'max-age=1' });
  await good.load(short);
  now += 30_000;
  await good.load(short);
  t.equal(docs.fetches.get('/short.json'), 1, 'max-age below the lower bound is raised to it');

  const strict = fetcher('');
  t.teardown(() => strict.close());
  await t.rejects(strict.load(ok), /loopback address/, '127.0.0.1 is refused unless the operator allows it');
  const viaName = ok.replace('127.0.0.1', 'localhost');
  await t.rejects(strict.load(viaName), /loopback/, 'a name resolving to loopback is refused');
  await t.rejects(strict.load('https://10.1.2.3/client.json'), /private address/, 'a private literal is refused before connecting');
  await t.rejects(strict.load('https://169.254.169.254/latest/meta-data'), /a link-local address/, 'cloud metadata is refused');
  await t.rejects(good.load(ok.replace('https:', 'http:')), /https/, 'plain http is refused');

  const moved = docs.serve('/moved.json', { status: 302, body: '', headers: { location: ok } });
  await t.rejects(good.load(moved), /HTTP 302.*redirects are not followed/);
  const missing = `${docs.origin}/missing.json`;
  await t.rejects(good.load(missing), /HTTP 404/);
  const html = docs.serve('/page.json', (origin) => ({ body: JSON.stringify(clientDocument(`${origin}/page.json`)), headers: { 'content-type': 'text/html' } }));
  await t.rejects(good.load(html), /not application\/json/);
  const big = docs.serve('/big.json', (origin) => ({ body: clientDocument(`${origin}/big.json`, { padding: 'x'.repeat(6000) }) }));
  await t.rejects(good.load(big), /larger than 5120 bytes/);
  const broken = docs.serve('/broken.json', { body: '{"client_id": ' });
  await t.rejects(good.load(broken), /not valid JSON/);
  const mismatched = docs.serve('/mismatch.json', { body: clientDocument('https://attacker.example/client.json') });
  await t.rejects(good.load(mismatched), /client_id is not the URL/);
  t.equal(docs.fetches.get('/mismatch.json'), 1);
  await t.rejects(good.load(mismatched), /client_id is not the URL/);
  t.equal(docs.fetches.get('/mismatch.json'), 2, 'refusals are not cached');
});

t.test('at the endpoints: a bad document is an error page at authorize and invalid_client at the token endpoint', async (t) => {
  const ctx = await startMcpApp();
  t.teardown(() => ctx.app.close());
  const open = (clientId: string, redirectUri = REDIRECT_URI) =>
    ctx.browser.request(authorizeUrl(ctx.base, { client_id: clientId, scope: 'inbox:read', code_challenge: pkce().challenge, redirect_uri: redirectUri }));

  const mismatched = docs.serve('/endpoint-mismatch.json', { body: clientDocument('https://attacker.example/client.json') });
  const page = await open(mismatched);
  t.equal(page.status, 400);
  t.match(page.text, /client metadata document cannot be used: the document&#39;s client_id is not the URL/);
  t.notOk(page.location, 'never redirected');

  const http = await open(mismatched.replace('https:', 'http:'));
  t.equal(http.status, 400);
  t.match(http.text, /must use https/);

  const good = serveGood('/endpoint-good.json');
  const wrongRedirect = await open(good, 'https://attacker.example/cb');
  t.equal(wrongRedirect.status, 400);
  t.match(wrongRedirect.text, /does not match any redirect URI/);
  const consent = await open(good);
  t.equal(consent.status, 200, 'a good document gets the consent screen');
  t.match(consent.text, new RegExp(`Identified by its metadata document on <strong>${new URL(docs.origin).host}</strong>`));

  const token = await tokenRequest(ctx.base, { grant_type: 'authorization_code', client_id: mismatched, code: 'x', redirect_uri: REDIRECT_URI, code_verifier: 'y'.repeat(43) });
  t.equal(token.status, 401);
  t.equal(token.json.error, 'invalid_client');
  t.match(token.json.error_description, /client_id is not the URL/);
});
