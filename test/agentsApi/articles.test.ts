import t from 'tap';
import { articleInputsOf } from '../../src/readModels/articles.ts';
import { anotherSite, expectError, keyWith } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';

const app = await startTestApp();
t.teardown(() => app.close());
const a = await createTenant(app.services);
const b = await createTenant(app.services);
const path = (siteId: string) => `/api/v1/sites/${siteId}/articles`;
const put = (payload: object, key = a.key, siteId = a.siteId) => app.fastify.inject({ method: 'PUT', url: path(siteId), headers: bearer(key), payload });
const get = (url: string, key = a.key) => app.fastify.inject({ url, headers: bearer(key) });

const HTML = '<h1>Worm bins</h1><p>A worm bin turns scraps into compost.</p><p>See <a href="/soil-basics">soil basics</a> and <a href="https://elsewhere.test/x">this</a>.</p>';

t.test('PUT creates (201), the same URL updates (200) and an identical body changes nothing', async (t) => {
  const created = await put({ url: 'https://example.test/worm-bins#top', title: 'Worm bins', html: HTML, publishedAt: '2025-03-01T10:00:00+02:00' });
  t.equal(created.statusCode, 201);
  const article = created.json().article;
  t.match(article, {
    url: 'https://example.test/worm-bins',
    title: 'Worm bins',
    format: 'html',
    text: 'Worm bins\n\nA worm bin turns scraps into compost.\n\nSee soil basics and this.',
    internalLinks: ['https://example.test/soil-basics'],
    wordCount: 14,
    publishedAt: '2025-03-01T08:00:00.000Z',
    updatedAt: null,
    html: HTML,
  });

  const updated = await put({ url: 'https://example.test/worm-bins', title: 'Worm bins, updated', text: 'Line one\nline two.\n\nSecond paragraph.', updatedAt: '2026-01-01T00:00:00Z' });
  t.equal(updated.statusCode, 200);
  t.equal(updated.json().article.id, article.id, 'keyed by URL: same article');
  t.match(updated.json().article, { format: 'text', text: 'Line one line two.\n\nSecond paragraph.', internalLinks: [], html: null });

  const before = await app.services.events.headPosition();
  const same = await put({ url: 'https://example.test/worm-bins', title: 'Worm bins, updated', text: 'Line one\nline two.\n\nSecond paragraph.', updatedAt: '2026-01-01T00:00:00Z' });
  t.equal(same.statusCode, 200);
  t.equal(await app.services.events.headPosition(), before, 'no event for an unchanged article');
});

t.test('bad bodies: 400 VALIDATION_ERROR', async (t) => {
  const good = { url: 'https://example.test/a', title: 'A', text: 'x' };
  const bad: Array<[string, object]> = [
    ['no body field', { url: good.url, title: 'A' }],
    ['both html and text', { ...good, html: '<p>x</p>' }],
    ['not a URL', { ...good, url: 'example.test/a' }],
    ['ftp URL', { ...good, url: 'ftp://example.test/a' }],
    ['another domain', { ...good, url: 'https://elsewhere.test/a' }],
    ['credentials in the URL', { ...good, url: 'https://user:secret@example.test/a' }],
    ['a user name in the URL', { ...good, url: 'https://user@example.test/a' }],
    ['empty title', { ...good, title: '  ' }],
    ['bad date', { ...good, publishedAt: 'yesterday' }],
    ['unknown field', { ...good, author: 'me' }],
    ['oversize body', { ...good, text: 'x'.repeat(500_001) }],
  ];
  for (const [what, payload] of bad) expectError(t, await put(payload), 400, 'VALIDATION_ERROR', what);
  const notUrl = (await put({ ...good, url: 'not a url' })).json() as { error: { message: string } };
  t.equal(notUrl.error.message, 'body.url: Invalid URL', 'not a URL: only that, no word about credentials');
  t.match(((await put({ ...good, url: 'https://user@example.test/a' })).json() as { error: { message: string } }).error.message, /credentials/);
});

t.test('GET lists with a cursor and gets one; articleInputsOf gives the agents their input', async (t) => {
  for (let i = 0; i < 3; i++) t.equal((await put({ url: `https://www.example.test/post-${i}`, title: `Post ${i}`, html: `<p>Post ${i}</p><a href="/worm-bins">bins</a>` })).statusCode, 201);
  const first = await get(`${path(a.siteId)}?limit=2`);
  t.equal(first.statusCode, 200);
  t.equal(first.json().articles.length, 2);
  t.equal(first.json().hasMore, true);
  t.notOk('text' in first.json().articles[0], 'the list leaves the text out');
  const second = await get(`${path(a.siteId)}?limit=2&cursor=${first.json().nextCursor}`);
  t.equal(second.json().articles.length, 2);
  t.equal(second.json().hasMore, false);
  const urls = [...first.json().articles, ...second.json().articles].map((x: { url: string }) => x.url);
  t.same(new Set(urls).size, 4, 'every article once');

  const one = await get(`${path(a.siteId)}/${first.json().articles[0].id}`);
  t.equal(one.statusCode, 200);
  t.match(one.json().article, { text: /^Post \d\n\nbins$/, internalLinks: ['https://www.example.test/worm-bins'] });

  const inputs = await articleInputsOf(app.services.readModels, a.siteId);
  t.equal(inputs.length, 4);
  t.same(Object.keys(inputs[0]!).sort(), ['id', 'links', 'publishedAt', 'text', 'title', 'updatedAt', 'url']);
  t.same(await articleInputsOf(app.services.readModels, b.siteId), [], "another site's articles are not given");

  expectError(t, await get(`${path(a.siteId)}?cursor=garbage`), 400, 'VALIDATION_ERROR', 'bad cursor');
  expectError(t, await get(`${path(a.siteId)}/no-such-article`), 404, 'NOT_FOUND', 'unknown id');
});

t.test('DELETE removes an article; tenancy and scopes hold on every route', async (t) => {
  const created = (await put({ url: 'https://example.test/to-delete', title: 'Gone', text: 'soon' })).json().article;
  const del = await app.fastify.inject({ method: 'DELETE', url: `${path(a.siteId)}/${created.id}`, headers: bearer(a.key) });
  t.equal(del.statusCode, 200);
  expectError(t, await get(`${path(a.siteId)}/${created.id}`), 404, 'NOT_FOUND', 'deleted');
  const again = await put({ url: 'https://example.test/to-delete', title: 'Back', text: 'again' });
  t.equal(again.statusCode, 201);
  t.equal(again.json().article.id, created.id, 'a re-created URL keeps its id');

  const existing = again.json().article.id;
  expectError(t, await get(`${path(a.siteId)}/${existing}`, b.key), 404, 'SITE_NOT_FOUND', "another team's key");
  expectError(t, await put({ url: 'https://example.test/x', title: 'x', text: 'x' }, b.key), 404, 'SITE_NOT_FOUND', "another team's site");
  const second = await anotherSite(app.services, a.teamId, 'second.example.test');
  expectError(t, await get(`${path(second)}/${existing}`), 404, 'NOT_FOUND', "another site's article");
  const restricted = await keyWith(app.services, a.teamId, ['articles:read', 'articles:write'], second);
  expectError(t, await get(path(a.siteId), restricted.key), 404, 'SITE_NOT_FOUND', 'key restricted to another site');
  const readOnly = await keyWith(app.services, a.teamId, ['articles:read']);
  expectError(t, await put({ url: 'https://example.test/x', title: 'x', text: 'x' }, readOnly.key), 403, 'INSUFFICIENT_SCOPE', 'write without articles:write');
  const writeOnly = await keyWith(app.services, a.teamId, ['articles:write']);
  expectError(t, await get(path(a.siteId), writeOnly.key), 403, 'INSUFFICIENT_SCOPE', 'read without articles:read');
  expectError(t, await get(path(a.siteId), 'svc_' + '0'.repeat(64)), 401, 'UNAUTHORIZED', 'unknown key');
});
