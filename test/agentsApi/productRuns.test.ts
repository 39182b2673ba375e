import t from 'tap';
import { ARTICLES, SITE } from '../agentWork/corpus/homeCoffee.ts';
import { startProduct } from './productHelpers.ts';

// The four content agents through the product path: the real registry (src/agentWorkWiring.ts),
// the corpus upserted through the articles API, each agent configured, run and read back over REST.
const product = await startProduct(t, { plan: 'pro', domain: new URL(SITE).hostname, env: { AGENT_RUNS_PER_HOUR: '10' } });
const { putArticle, activate, runToEnd, opportunities } = product;
const url = (slug: string) => `${SITE}/${slug}/`;

const stored = new Map<string, { id: string; url: string }>();
for (const a of ARTICLES) stored.set(a.url, await putArticle(a));
const idOf = (slug: string) => stored.get(url(slug))!.id;

t.test('the corpus went in through the API as the agents read it', async (t) => {
  const listed = (await product.inject('GET', `${product.site}/articles?limit=100`)).json().articles as { url: string; internalLinks: string[] }[];
  t.equal(listed.length, 12);
  t.same(listed.find((a) => a.url === url('coffee-to-water-ratio'))?.internalLinks, [url('pour-over'), url('french-press')], 'links kept');
});

t.test('interlinking: a sentence naming another article becomes a link proposal to it', async (t) => {
  await activate('interlinking', { maxLinksPerSource: 1 });
  const run = await runToEnd('interlinking');
  t.match(run, { status: 'succeeded', counts: { articlesRead: 12 } });
  const found = await opportunities('interlinking');
  t.equal(found.length, run.counts['linksProposed'], 'one opportunity per proposed link');
  t.ok(found.length > 0);
  t.same(found.map((o) => o.runId), found.map(() => run.id));
  const grinder = found.find((o) => o.sourceUrl === url('storing-coffee-beans'));
  t.match(grinder, {
    kind: 'interlinking',
    targetUrl: url('burr-grinder'),
    anchorText: 'burr grinder',
    suggestedSentence: /grinding just before brewing with a burr grinder/,
    details: { kind: 'interlinking', sourceArticleId: idOf('storing-coffee-beans'), targetArticleId: idOf('burr-grinder'), anchor: 'burr grinder' },
  });
  for (const o of found) {
    const details = o.details as { sentence: string; anchor: string; sourceUrl: string; targetUrl: string };
    t.ok(details.sentence.toLowerCase().includes(details.anchor.toLowerCase()), `the anchor "${details.anchor}" is in its sentence`);
    t.not(details.sourceUrl, details.targetUrl, 'no self link');
    const source = ARTICLES.find((a) => a.url === details.sourceUrl)!;
    t.notOk(source.links.includes(details.targetUrl), `${details.sourceUrl} does not already link ${details.targetUrl}`);
    t.ok(source.text.includes(details.sentence), 'the sentence is verbatim from the source article');
  }
  t.notOk(found.some((o) => o.sourceUrl === url('dial-in-espresso') && o.targetUrl === url('burr-grinder')), 'an existing link is not proposed again');
});

t.test('article_boost: the old thin unlinked article is flagged with its reasons', async (t) => {
  await activate('article_boost', { minWords: 100 });
  const run = await runToEnd('article_boost');
  t.match(run, { status: 'succeeded', counts: { thin: 1 } });
  const found = await opportunities('article_boost');
  t.equal(found.length, run.counts['refreshesProposed']);
  const descaling = found.find((o) => o.targetUrl === url('descaling-espresso-machine'));
  t.match(descaling, { kind: 'article_boost', details: { kind: 'article_boost', articleId: idOf('descaling-espresso-machine'), reasons: ['stale', 'thin', 'poorly_linked'], detail: /\S/ } });
  t.notOk(found.some((o) => o.targetUrl === url('dial-in-espresso')), 'a fresh, long, linked article is left alone');
});

t.test('article_creation: a seed keyword no article covers and a topic mentioned everywhere become topics', async (t) => {
  await activate('article_creation', { seedKeywords: ['moka pot', 'burr grinder'] });
  const run = await runToEnd('article_creation');
  t.equal(run.status, 'succeeded');
  const topics = (await opportunities('article_creation')).map((o) => o.details as { topic: string; rationale: string });
  t.ok(topics.some((d) => d.topic === 'moka pot' && d.rationale.length > 0), 'the uncovered seed keyword');
  t.ok(topics.some((d) => d.topic === 'gooseneck kettle'), 'mentioned in several articles, covered by none');
  t.notOk(topics.some((d) => d.topic === 'burr grinder'), 'a seed keyword an article covers is not proposed');
});

t.test('ai_prompt: questions paired with the article that answers them', async (t) => {
  await activate('ai_prompt', { seedKeywords: ['moka pot'], maxQuestions: 50 });
  const run = await runToEnd('ai_prompt');
  t.equal(run.status, 'succeeded');
  const found = await opportunities('ai_prompt');
  const ask = (q: string) => found.find((o) => (o.details as { question: string }).question === q)?.details;
  t.match(ask('Why does my espresso taste sour?'), { articleId: idOf('dial-in-espresso'), url: url('dial-in-espresso') });
  t.match(ask('How do I descale my espresso machine?'), { articleId: idOf('descaling-espresso-machine') });
  t.match(ask('Is cold brew stronger than hot coffee?'), { articleId: idOf('cold-brew') });
  t.match(ask('What is the best moka pot?'), { articleId: null, url: null, rationale: /no article covers it/ });
});

t.test('the runs are listed with their agents', async (t) => {
  const runs = (await product.inject('GET', `/api/v1/sites/${product.tenant.siteId}/agents/runs?status=succeeded`)).json().runs as { agentKey: string }[];
  t.same(runs.map((r) => r.agentKey).sort(), ['ai_prompt', 'article_boost', 'article_creation', 'interlinking']);
});

t.test('a second run finds the same links: none is recorded again, the run counts them', async (t) => {
  const before = await opportunities('interlinking');
  t.ok(before.length > 0);
  const run = await runToEnd('interlinking');
  t.match(run, { status: 'succeeded', counts: { linksProposed: before.length, alreadyProposed: before.length } });
  const after = await opportunities('interlinking');
  t.same(after.map((o) => o.id).sort(), before.map((o) => o.id).sort(), 'the same opportunities, no duplicate');
});

t.test('a second run of an agent with a cap proposes the next topics, not the first ones again', async (t) => {
  // Seeds no title covers; the corpus's own topics were all proposed by the first run above.
  await activate('article_creation', { seedKeywords: ['water hardness', 'travel grinder', 'decaf process'], maxTopics: 1 });
  const topicsNow = async () => (await opportunities('article_creation')).map((o) => (o.details as { topic: string }).topic);
  const before = await topicsNow();
  for (const expected of ['water hardness', 'travel grinder']) {
    const run = await runToEnd('article_creation');
    t.match(run, { status: 'succeeded', counts: { topicsProposed: 1 } });
    const topics = await topicsNow();
    t.same(topics.filter((topic) => !before.includes(topic)).sort(), expected === 'water hardness' ? ['water hardness'] : ['travel grinder', 'water hardness'], `then ${expected}`);
  }
});
