import t from 'tap';
import type { ArticleInput } from '../../src/domain/agentWork.ts';
import { DEFAULT_INTERLINKING, proposeInternalLinks } from '../../src/domain/agentWork/interlinking.ts';
import { ARTICLES, SITE, byId } from './corpus/homeCoffee.ts';

const proposals = proposeInternalLinks(ARTICLES);
const find = (source: string, target: string) => proposals.find((p) => p.sourceArticleId === source && p.targetArticleId === target);

t.test('proposes a link where one article names the topic of another, with the words and sentence verbatim', async (t) => {
  t.same(find('a07', 'a02'), {
    kind: 'interlinking',
    sourceArticleId: 'a07',
    sourceUrl: `${SITE}/storing-coffee-beans/`,
    anchor: 'burr grinder',
    targetArticleId: 'a02',
    targetUrl: `${SITE}/burr-grinder/`,
    sentence: 'Beans taste best between one and four weeks after roasting, and grinding just before brewing with a burr grinder keeps most of that freshness in the cup.',
  });
  t.equal(find('a05', 'a06')?.anchor, 'Water temperature', 'the anchor keeps the source capitalisation');
  t.equal(find('a05', 'a06')?.sentence, 'Water temperature matters more than most beginners think.');
  t.equal(find('a03', 'a12')?.anchor, 'coffee to water ratio', 'a phrase with an inner stopword');
  t.equal(find('a08', 'a05')?.anchor, 'pour over coffee');
  t.equal(find('a12', 'a04')?.anchor, 'cold brew concentrate', 'the longest title phrase wins over "cold brew"');
  t.equal(find('a02', 'a04')?.anchor, 'cold brew', 'a shorter part of the title still names it');
});

t.test('every proposal is honest: anchor inside the sentence, sentence inside the source, never a self link', async (t) => {
  t.ok(proposals.length >= 12, `${proposals.length} proposals`);
  for (const p of proposals) {
    t.not(p.sourceArticleId, p.targetArticleId);
    t.ok(p.sentence.includes(p.anchor), `${p.anchor} in its sentence`);
    t.ok(byId(p.sourceArticleId).text.includes(p.sentence), 'sentence verbatim in the source');
    t.equal(p.targetUrl, byId(p.targetArticleId).url);
  }
  const pairs = proposals.map((p) => `${p.sourceArticleId}>${p.targetArticleId}`);
  t.equal(new Set(pairs).size, pairs.length, 'one link per source and target');
});

t.test('a source that already links the target gets no proposal', async (t) => {
  t.equal(find('a01', 'a02'), undefined, 'dial-in links the burr grinder article already');
  t.equal(find('a11', 'a05'), undefined, 'AeroPress links pour over already');
  t.equal(find('a12', 'a03'), undefined, 'ratio links French press already');
  t.equal(find('a09', 'a01'), undefined);
  const variant: ArticleInput = { ...byId('a07'), links: ['https://WWW.brewathome.example/burr-grinder#top'] };
  const again = proposeInternalLinks(ARTICLES.map((a) => (a.id === 'a07' ? variant : a)));
  t.notOk(again.some((p) => p.sourceArticleId === 'a07' && p.targetArticleId === 'a02'), 'the same page under another spelling of its URL');
});

t.test('words shared by two titles name no article; headings are never linked', async (t) => {
  t.notOk(proposals.some((p) => p.anchor.toLowerCase() === 'espresso'), '"espresso" is in two titles');
  t.notOk(proposals.some((p) => p.anchor.toLowerCase() === 'coffee'));
  for (const p of proposals) t.notOk(p.sentence.endsWith('?') && p.sentence.split(' ').length < 10, 'not a heading');
});

t.test('at most N links per source, the most specific first', async (t) => {
  const one = proposeInternalLinks(ARTICLES, { ...DEFAULT_INTERLINKING, maxLinksPerSource: 1 });
  const sources = one.map((p) => p.sourceArticleId);
  t.equal(new Set(sources).size, sources.length);
  t.equal(one.find((p) => p.sourceArticleId === 'a12')?.anchor, 'cold brew concentrate');
  const none = proposeInternalLinks(ARTICLES, { ...DEFAULT_INTERLINKING, maxLinksPerSource: 0 });
  t.same(none, []);
});

t.test('one distinctive title word names its article; a common one does not', async (t) => {
  const extra: ArticleInput = {
    id: 'x1',
    url: `${SITE}/travel-brewing/`,
    title: 'Brewing Coffee While Travelling',
    text: 'Hotel rooms are hard on coffee lovers. I pack an AeroPress, a hand grinder and a small scale, and that covers a week away.',
    links: [],
    publishedAt: null,
    updatedAt: null,
  };
  const got = proposeInternalLinks([...ARTICLES, extra]).filter((p) => p.sourceArticleId === 'x1');
  t.same(
    got.map((p) => [p.anchor, p.targetArticleId]),
    [['AeroPress', 'a11']],
    'the AeroPress article uses its word often and nobody else does',
  );
});
