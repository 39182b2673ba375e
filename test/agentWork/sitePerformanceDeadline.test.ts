import t from 'tap';
import { testCertificate } from '../webhooks/helpers.ts';
import { html, startSite } from '../agentWork/sites.ts';
import { startProduct } from '../agentsApi/productHelpers.ts';

/**
 * A run cut by AGENT_RUN_MAX_MS records what it did; the site-performance work must not turn the
 * fetches the deadline stopped ("stopped before a complete answer") into `unreachable` proposals,
 * which would tell the team that healthy (merely slow) pages are down.
 */
t.test('a site-performance run cut by AGENT_RUN_MAX_MS does not report the pages in flight as unreachable', async (t) => {
  const { caFile } = await testCertificate();
  const pages = await startSite({
    '/fast/': { body: html('Fast page') },
    '/slow-a/': { body: html('Slow A'), delayMs: 5_000 },
    '/slow-b/': { body: html('Slow B'), delayMs: 5_000 },
  });
  t.teardown(() => pages.close());
  const product = await startProduct(t, {
    plan: 'pro',
    domain: '127.0.0.1',
    env: { WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', WEBHOOK_EXTRA_CA_FILE: caFile, AGENT_RUN_MAX_MS: '1500', AGENT_RUN_LEASE_MS: '10000' },
  });
  for (const path of ['/fast/', '/slow-a/', '/slow-b/']) {
    await product.putArticle({ url: `${pages.origin}${path}`, title: path, text: 'A page of the site.', links: [], publishedAt: null, updatedAt: null });
  }
  await product.activate('site_performance', { slowMs: 10_000, timeoutMs: 30_000 });
  const run = await product.runToEnd('site_performance');
  t.comment(JSON.stringify(run.counts));
  t.equal(run.status, 'succeeded', 'the overtime run is recorded');
  t.equal(run.counts.unreachable ?? 0, 0, 'pages whose fetch the deadline stopped are not reported unreachable');
  const found = await product.opportunities('site_performance');
  t.same(found.map((o) => (o.details as { detail?: string }).detail), [], 'no opportunity says a page gave "no answer: stopped before a complete answer"');
});
