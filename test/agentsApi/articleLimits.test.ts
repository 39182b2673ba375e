import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SqliteReadModelStore } from '../../src/adapters/sqlite/sqliteReadModelStore.ts';
import { ARTICLES, ARTICLE_TOTALS, getArticleTotals } from '../../src/readModels/articles.ts';
import { expectError } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';

/**
 * A site's articles are bounded in number (SITE_MAX_ARTICLES) and in body bytes
 * (SITE_MAX_ARTICLE_BYTES): every body is held by the read models, so one client must not grow
 * them without bound for every other tenant (from an audit: 30 PUTs of 14 MB raised the RSS by 185 MB).
 */
t.test('one article too many, or too many bytes, is refused with 409 ARTICLE_LIMIT_REACHED; updates that do not grow are taken', async (t) => {
  const app = await startTestApp({ env: { SITE_MAX_ARTICLES: '3', SITE_MAX_ARTICLE_BYTES: '1000' } });
  t.teardown(() => app.close());
  const a = await createTenant(app.services);
  const b = await createTenant(app.services);
  const put = (payload: object, tenant = a) =>
    app.fastify.inject({ method: 'PUT', url: `/api/v1/sites/${tenant.siteId}/articles`, headers: bearer(tenant.key), payload });
  const article = (n: number, text: string) => ({ url: `https://example.test/post-${n}`, title: `Post ${n}`, text });

  for (let n = 1; n <= 3; n++) t.equal((await put(article(n, 'x'.repeat(100)))).statusCode, 201, `article ${n}`);
  t.same(await getArticleTotals(app.services.readModels, a.siteId), { count: 3, bytes: 300 });
  const fourth = await put(article(4, 'short'));
  expectError(t, fourth, 409, 'ARTICLE_LIMIT_REACHED', 'a fourth article');
  t.match(fourth.json().error.message, /at most 3 articles/);
  t.equal((await put(article(1, 'y'.repeat(100)))).statusCode, 200, 'an update of one of the three is taken');

  // Bytes: 300 held; growing one article by 700 fits (1,000), by one byte more does not. UTF-8 bytes: "é" is two.
  t.equal((await put(article(2, 'z'.repeat(800)))).statusCode, 200, 'grown to exactly the limit');
  t.same(await getArticleTotals(app.services.readModels, a.siteId), { count: 3, bytes: 1000 });
  const tooBig = await put(article(3, 'é'.repeat(51)));
  expectError(t, tooBig, 409, 'ARTICLE_LIMIT_REACHED', 'one byte over');
  t.match(tooBig.json().error.message, /at most 1000 bytes/);
  t.equal((await put(article(3, 'é'.repeat(50)))).statusCode, 200, 'the same length in bytes as before is taken');

  // Another site of another team is not affected.
  t.equal((await put(article(1, 'x'.repeat(900)), b)).statusCode, 201, "another team's site has its own totals");

  // A delete frees room for a new article.
  const listed = (await app.fastify.inject({ url: `/api/v1/sites/${a.siteId}/articles`, headers: bearer(a.key) })).json().articles as Array<{ id: string; url: string }>;
  const second = listed.find((x) => x.url.endsWith('/post-2'))!;
  t.equal((await app.fastify.inject({ method: 'DELETE', url: `/api/v1/sites/${a.siteId}/articles/${second.id}`, headers: bearer(a.key) })).statusCode, 200);
  t.same(await getArticleTotals(app.services.readModels, a.siteId), { count: 2, bytes: 200 });
  t.equal((await put(article(4, 'short'))).statusCode, 201, 'after a delete, a new article fits');
});

t.test('the totals survive a restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-articles-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestApp({ env: { SITE_MAX_ARTICLES: '2' }, dataDir });
  const a = await createTenant(first.services);
  const put = (app: typeof first, n: number) =>
    app.fastify.inject({ method: 'PUT', url: `/api/v1/sites/${a.siteId}/articles`, headers: bearer(a.key), payload: { url: `https://example.test/p${n}`, title: 'T', text: 'body' } });
  t.equal((await put(first, 1)).statusCode, 201);
  t.equal((await put(first, 2)).statusCode, 201);
  await first.close();
  const again = await startTestApp({ env: { SITE_MAX_ARTICLES: '2' }, dataDir });
  t.teardown(() => again.close());
  expectError(t, await put(again, 3), 409, 'ARTICLE_LIMIT_REACHED', 'after a restart');
});

t.test('without totals (the projection rebuilding into its version 2, which added them) the totals are counted from the articles', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'outreach-article-totals-'));
  const store = new SqliteReadModelStore(join(dir, 'readModels.sqlite'));
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // The read model as version 1 left it: articles, no totals.
  const rebuild = await store.beginRebuild('articles', [ARTICLES, ARTICLE_TOTALS]);
  const doc = (id: string, siteId: string, body: string) => ({ doc: { id, siteId, teamId: 'tm', url: `https://example.test/${id}`, body }, position: 1n });
  await rebuild.write(ARTICLES, [doc('a1', 's1', 'x'.repeat(100)), doc('a2', 's1', 'é'.repeat(10)), doc('b1', 's2', 'y')]);
  await rebuild.commit(1, 3n);
  t.same(await getArticleTotals(store, 's1'), { count: 2, bytes: 120 }, "the site's two articles, in UTF-8 bytes");
  t.same(await getArticleTotals(store, 's3'), { count: 0, bytes: 0 }, 'a site without articles');
});

t.test('concurrent new articles of one site: exactly the limit is taken, the rest refused, the totals exact', async (t) => {
  const app = await startTestApp({ env: { SITE_MAX_ARTICLES: '5', SITE_MAX_ARTICLE_BYTES: '100000' } });
  t.teardown(() => app.close());
  const a = await createTenant(app.services);
  const put = (n: number) =>
    app.fastify.inject({ method: 'PUT', url: `/api/v1/sites/${a.siteId}/articles`, headers: bearer(a.key), payload: { url: `https://example.test/c${n}`, title: `C ${n}`, text: 'x'.repeat(100) } });
  const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => put(n)));
  const codes = answers.map((r) => r.statusCode);
  t.equal(codes.filter((c) => c === 201).length, 5, 'five created');
  t.equal(codes.filter((c) => c === 409).length, 15, 'the other fifteen refused');
  for (const r of answers.filter((r) => r.statusCode === 409)) t.equal(r.json().error.code, 'ARTICLE_LIMIT_REACHED');
  t.same(await getArticleTotals(app.services.readModels, a.siteId), { count: 5, bytes: 500 });
});
