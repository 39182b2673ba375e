import t from 'tap';
import { testCertificate } from '../webhooks/helpers.ts';
import { html, startSite } from '../agentWork/sites.ts';
import { startProduct } from './productHelpers.ts';

// site_performance through the product path: the articles' URLs are pages of a local HTTPS site,
// fetched by the runner's SafePageFetcher built from the config (allowed range, extra CA).
t.test('a run names each broken, slow, redirected and untitled page, and leaves the healthy one alone', async (t) => {
  const { caFile } = await testCertificate();
  const pages = await startSite({
    '/espresso/': { body: html('Dial in espresso') },
    '/grinder/': { status: 404, body: html('Not found') },
    '/slow-ratio/': { body: html('Coffee to water ratio'), delayMs: 1_500 },
    '/old-cold-brew/': { status: 301, headers: { location: '/cold-brew/' } },
    '/no-title/': { body: html(null) },
  });
  t.teardown(() => pages.close());
  const product = await startProduct(t, {
    plan: 'pro',
    domain: '127.0.0.1',
    env: { WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', WEBHOOK_EXTRA_CA_FILE: caFile },
  });
  const url = (path: string) => `${pages.origin}${path}`;
  for (const path of ['/espresso/', '/grinder/', '/slow-ratio/', '/old-cold-brew/', '/no-title/']) {
    await product.putArticle({ url: url(path), title: path, text: 'A page of the site.', links: [], publishedAt: null, updatedAt: null });
  }
  await product.activate('site_performance', { slowMs: 700 });
  const run = await product.runToEnd('site_performance');
  t.match(run, { status: 'succeeded', counts: { pagesChecked: 5, broken: 1, slow: 1, redirected: 1, untitled: 1 } });

  const found = await product.opportunities('site_performance');
  const at = (path: string) => found.find((o) => o.targetUrl === url(path) || (o.details as { url?: string } | null)?.url === url(path));
  t.equal(found.length, 4, 'one opportunity per page with a problem');
  t.equal(at('/espresso/'), undefined, 'the healthy page has none');
  t.match(at('/grinder/'), { kind: 'site_performance', runId: run.id, details: { problems: ['broken'], status: 404, detail: 'Answers 404.' } });
  t.match(at('/slow-ratio/'), { details: { problems: ['slow'], status: 200 } });
  t.ok(((at('/slow-ratio/')?.details as { durationMs?: number } | undefined)?.durationMs ?? 0) >= 1_400, 'its measured time');
  t.match(at('/old-cold-brew/'), { details: { problems: ['redirected'], status: 301, location: url('/cold-brew/'), detail: `Redirects (301) to ${url('/cold-brew/')}.` } });
  t.match(at('/no-title/'), { details: { problems: ['untitled'], detail: 'The page has no <title>.' } });
  t.same(pages.requests.map((r) => r.path).sort(), ['/espresso/', '/grinder/', '/no-title/', '/old-cold-brew/', '/slow-ratio/'], 'each page fetched once, the redirect not followed');
});
