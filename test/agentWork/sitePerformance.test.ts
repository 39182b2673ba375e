import t from 'tap';
import { sitePerformanceWork } from '../../src/agentWork/sitePerformance.ts';
import type { ArticleInput } from '../../src/domain/agentWork.ts';
import { judgePage, pageTitle } from '../../src/domain/agentWork/sitePerformance.ts';
import { PageFetchError } from '../../src/ports/pageFetcher.ts';
import { runOf, workDeps, workServices } from './helpers.ts';
import { html, loopbackFetcher, startSite } from './sites.ts';

t.test('the page fetcher: one GET, no redirect followed, body capped, private addresses refused', async (t) => {
  const site = await startSite({
    '/moved/': { status: 301, headers: { location: '/new-home/' } },
    '/big/': { body: html('Big', 'x'.repeat(50_000)) },
  });
  const fetcher = await loopbackFetcher({ maxBytes: 1000 });
  t.teardown(async () => {
    await fetcher.close();
    await site.close();
  });
  const moved = await fetcher.fetch(`${site.origin}/moved/`);
  t.equal(moved.status, 301);
  t.equal(moved.location, `${site.origin}/new-home/`, 'Location reported, resolved');
  t.same(site.requests.map((r) => r.path), ['/moved/'], 'and not followed');
  t.equal(site.requests[0]?.userAgent, fetcher.userAgent);
  const big = await fetcher.fetch(`${site.origin}/big/`);
  t.equal(big.body.length, 1000);
  t.equal(big.truncated, true);
  t.equal(big.headers['content-type'], 'text/html; charset=utf-8');
  const failure = (url: string) => fetcher.fetch(url).then(() => null, (e: unknown) => e);
  const privateAddress = await failure('https://192.168.10.20/');
  t.ok(privateAddress instanceof PageFetchError && privateAddress.reason === 'blocked' && /private/.test(privateAddress.message), String(privateAddress));
  const plain = await failure(`http://127.0.0.1:${new URL(site.origin).port}/`);
  t.ok(plain instanceof PageFetchError && plain.reason === 'blocked', 'plain http refused');
  t.equal(site.requests.length, 2, 'neither reached the site');
});

t.test('a run reports broken, unreachable, slow, redirected and untitled pages, and nothing on healthy ones', async (t) => {
  const site = await startSite({
    '/espresso/': { body: html('Dial in espresso') },
    '/grinder/': { status: 404 },
    '/kettle/': { status: 500, body: 'oops' },
    '/old-cold-brew/': { status: 301, headers: { location: '/cold-brew/' } },
    '/slow-ratio/': { body: html('Ratio'), delayMs: 700 },
    '/no-title/': { body: html(null) },
    '/empty-title/': { body: html('  ') },
  });
  const { services, close } = await workServices();
  const fetcher = await loopbackFetcher();
  t.teardown(async () => {
    await fetcher.close();
    await site.close();
    await close();
  });
  const article = (path: string): ArticleInput => ({ id: path, url: path.startsWith('https') ? path : `${site.origin}${path}`, title: path, text: '', links: [], publishedAt: null, updatedAt: null });
  const articles = ['/espresso/', '/grinder/', '/kettle/', '/old-cold-brew/', '/slow-ratio/', '/no-title/', '/empty-title/', 'https://10.1.2.3/private/'].map(article);
  const result = await sitePerformanceWork(runOf('site_performance', 's1', { slowMs: 400, concurrency: 3 }), workDeps(services, articles, { fetcher }));
  const byPath = new Map(result.proposals.map((p) => [p.kind === 'site_performance' ? new URL(p.url).pathname : '', p]));
  t.equal(byPath.get('/espresso/'), undefined, 'a healthy page has no proposal');
  t.match(byPath.get('/grinder/'), { kind: 'site_performance', problems: ['broken'], status: 404, detail: 'Answers 404.' });
  t.match(byPath.get('/kettle/'), { problems: ['broken'], status: 500 });
  t.match(byPath.get('/old-cold-brew/'), { problems: ['redirected'], status: 301, location: `${site.origin}/cold-brew/`, detail: `Redirects (301) to ${site.origin}/cold-brew/.` });
  const slow = byPath.get('/slow-ratio/');
  t.match(slow, { problems: ['slow'], status: 200 });
  t.ok(slow?.kind === 'site_performance' && (slow.durationMs ?? 0) >= 650, 'its measured time');
  t.match(byPath.get('/no-title/'), { problems: ['untitled'], detail: 'The page has no <title>.' });
  t.match(byPath.get('/empty-title/'), { problems: ['untitled'] });
  t.match(byPath.get('/private/'), { problems: ['unreachable'], status: null, durationMs: null });
  t.match(byPath.get('/private/')?.kind === 'site_performance' ? byPath.get('/private/') : null, { detail: /^No answer: refused: .*private/ });
  t.same(result.counts, { pagesChecked: 8, broken: 2, unreachable: 1, slow: 1, redirected: 1, untitled: 2 });
  t.notOk(site.requests.some((r) => r.path === '/cold-brew/'), 'the redirect is reported, not followed');
});

t.test('judging one page', async (t) => {
  const base = { url: 'https://s.example/a/', status: 200, durationMs: 100, location: null, contentType: 'text/html', body: html('A'), error: null };
  t.equal(judgePage(base, { slowMs: 1000 }), null);
  t.same(judgePage({ ...base, status: 404, durationMs: 2000 }, { slowMs: 1000 })?.problems, ['broken', 'slow']);
  t.equal(judgePage({ ...base, contentType: 'application/pdf', body: '%PDF' }, { slowMs: 1000 }), null, 'a PDF needs no <title>');
  t.equal(pageTitle('<html><head><TITLE lang="en">\n  Cold <b>brew</b>  </TITLE></head>'), 'Cold brew');
  t.equal(pageTitle('<html><body>no head</body></html>'), null);
});
