import t from 'tap';
import { ARTICLES, SITE } from '../agentWork/corpus/homeCoffee.ts';
import { startProduct } from './productHelpers.ts';

// Two runs of one agent on one site at the same time (a scheduled run and `run_agent`, say): the
// runner executes them side by side (AGENT_RUN_CONCURRENCY 3: a team holds every slot but one), both
// find the same links, and the site ends with each link proposed once.
const product = await startProduct(t, { plan: 'pro', domain: new URL(SITE).hostname, env: { AGENT_RUNS_PER_HOUR: '10', AGENT_RUN_CONCURRENCY: '3' } });
for (const a of ARTICLES) await product.putArticle(a);

t.test('two interlinking runs at once record each link once', async (t) => {
  await product.activate('interlinking', {});
  const [first, second] = await Promise.all([product.runToEnd('interlinking'), product.runToEnd('interlinking')]);
  t.equal(first.status, 'succeeded');
  t.equal(second.status, 'succeeded');
  const found = await product.opportunities('interlinking');
  t.ok(found.length > 0, 'links were proposed');
  const keys = found.map((o) => {
    const d = o.details as { sourceArticleId: string; targetArticleId: string };
    return `${d.sourceArticleId} → ${d.targetArticleId}`;
  });
  t.same([...new Set(keys)].sort(), [...keys].sort(), 'no link proposed twice');
  const proposed = (first.counts['linksProposed'] ?? 0) + (second.counts['linksProposed'] ?? 0);
  t.equal((first.counts['alreadyProposed'] ?? 0) + (second.counts['alreadyProposed'] ?? 0), proposed - found.length, 'the other run counts what one recorded');
});
