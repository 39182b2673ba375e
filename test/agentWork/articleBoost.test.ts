import t from 'tap';
import type { ArticleInput } from '../../src/domain/agentWork.ts';
import { inboundLinkCounts, proposeArticleBoosts } from '../../src/domain/agentWork/articleBoost.ts';
import { ARTICLES, SITE } from './corpus/homeCoffee.ts';

const NOW = '2026-11-23T12:00:00Z';
const settings = { staleAfterDays: 365, minWords: 100, minInboundLinks: 1, maxProposals: 50 };
const proposals = proposeArticleBoosts(ARTICLES, NOW, settings);
const of = (id: string) => proposals.find((p) => p.articleId === id);

t.test('the old, short, unlinked descaling note comes first with all three reasons', async (t) => {
  t.same(proposals[0], {
    kind: 'article_boost',
    articleId: 'a10',
    url: `${SITE}/descaling-espresso-machine/`,
    reasons: ['stale', 'thin', 'poorly_linked'],
    detail: 'Published 2021-08-30, 1911 days ago (stale after 365); 37 words (minimum 100); linked from 0 other articles (minimum 1).',
  });
});

t.test('each article gets exactly the reasons that hold for it', async (t) => {
  t.same(of('a06')?.reasons, ['stale', 'poorly_linked'], 'water temperature: updated 2023, nobody links it');
  t.match(of('a06')?.detail, /^Last updated 2023-02-01, 1391 days ago \(stale after 365\); linked from 0 other articles/);
  t.same(of('a08')?.reasons, ['poorly_linked'], 'roast levels: updated less than a year ago, but unlinked');
  t.same(of('a03')?.reasons, ['stale'], 'French press: linked from the ratio article, but last updated 2025-01-08');
  t.equal(of('a01'), undefined, 'dial-in: fresh, long, linked from milk frothing');
  t.equal(of('a02'), undefined, 'burr grinder: fresh and linked twice');
  for (const p of proposals) t.ok(p.reasons.length > 0 && p.detail.endsWith('.'));
});

t.test('thresholds come from the settings', async (t) => {
  const strict = proposeArticleBoosts(ARTICLES, NOW, { ...settings, minInboundLinks: 2 });
  t.same(strict.find((p) => p.articleId === 'a01')?.reasons, ['poorly_linked'], 'dial-in has one inbound link, two wanted');
  t.equal(strict.find((p) => p.articleId === 'a02'), undefined, 'burr grinder has two');
  const lenient = proposeArticleBoosts(ARTICLES, NOW, { ...settings, staleAfterDays: 5000, minInboundLinks: 0 });
  t.same(lenient.map((p) => [p.articleId, p.reasons]), [['a10', ['thin']]]);
  t.equal(proposeArticleBoosts(ARTICLES, NOW, { ...settings, maxProposals: 2 }).length, 2);
});

t.test('inbound links: distinct other articles, any spelling of the URL, never itself', async (t) => {
  const a = (id: string, links: string[]): ArticleInput => ({ id, url: `${SITE}/${id}/`, title: id, text: 'x', links, publishedAt: null, updatedAt: null });
  const counts = inboundLinkCounts([
    a('p', [`${SITE}/p/`, `${SITE}/q`, 'https://www.brewathome.example/q/#top']),
    a('q', []),
    a('r', [`${SITE}/q/`, 'https://elsewhere.example/q/']),
  ]);
  t.same(Object.fromEntries(counts), { p: 0, q: 2, r: 0 });
  const undated = proposeArticleBoosts([a('q', [])], NOW, settings)[0];
  t.match(undated?.detail, /^No published or updated date;/);
});
