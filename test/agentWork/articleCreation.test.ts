import t from 'tap';
import type { ArticleInput } from '../../src/domain/agentWork.ts';
import { DEFAULT_ARTICLE_CREATION, proposeArticleTopics } from '../../src/domain/agentWork/articleCreation.ts';
import { ARTICLES, SITE } from './corpus/homeCoffee.ts';

const settings = { ...DEFAULT_ARTICLE_CREATION, seedKeywords: ['Moka pot', 'espresso machine', 'French Press', 'paper filters'] };
const proposals = proposeArticleTopics(ARTICLES, settings);
const topics = proposals.map((p) => p.topic);

t.test('gear and terms the articles keep mentioning but never give their own article', async (t) => {
  for (const topic of ['kitchen scale', 'gooseneck kettle', 'roast date', 'coarse grind', 'light roasts']) t.ok(topics.includes(topic), topic);
  const scale = proposals.find((p) => p.topic === 'kitchen scale');
  t.same(scale, {
    kind: 'article_creation',
    topic: 'kitchen scale',
    keywords: ['kitchen scale'],
    rationale:
      'Mentioned in 4 articles ("How to Dial In Espresso at Home", "Cold Brew Concentrate Recipe", "Pour Over Coffee for Beginners" and 1 more) but no article\'s title covers it.',
  });
  t.same(proposals.find((p) => p.topic === 'coarse grind')?.keywords, ['coarse grind', 'french press'], 'the phrase it keeps company with');
});

t.test("topics a title already covers are not proposed", async (t) => {
  for (const covered of ['french press', 'burr grinder', 'cold brew', 'pour over coffee', 'coffee beans', 'water temperature', 'espresso machine']) {
    t.notOk(topics.some((x) => x.includes(covered)), `${covered} has its article`);
  }
  t.notOk(topics.includes('paper filter'), 'the seed "paper filters" already proposed it once');
});

t.test('seed keywords without an article come first, with what the corpus says of them', async (t) => {
  t.same(proposals[0], {
    kind: 'article_creation',
    topic: 'moka pot',
    keywords: ['moka pot'],
    rationale: 'Seed keyword "Moka pot": no article\'s title covers it. No article mentions it yet.',
  });
  t.equal(proposals[1]?.topic, 'paper filters');
  t.match(proposals[1]?.rationale, /^Seed keyword "paper filters": no article's title covers it\. It is mentioned in 4 articles \("French Press Brewing Guide"/);
  t.notOk(topics.includes('espresso machine'), 'seed covered by "Descaling Your Espresso Machine"');
});

t.test('minArticles and maxTopics bound the list', async (t) => {
  const strict = proposeArticleTopics(ARTICLES, { ...DEFAULT_ARTICLE_CREATION, minArticles: 5 });
  t.same(strict.map((p) => p.topic), ['light roasts']);
  t.equal(proposeArticleTopics(ARTICLES, { ...settings, maxTopics: 3 }).length, 3);
  const once: ArticleInput = { id: 'z', url: `${SITE}/z/`, title: 'Kitchen Scales Compared', text: 'x', links: [], publishedAt: null, updatedAt: null };
  t.notOk(proposeArticleTopics([...ARTICLES, once]).some((p) => p.topic === 'kitchen scale'), 'a new article covers it (plural title)');
});
