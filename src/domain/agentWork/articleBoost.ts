/**
 * Article Boost Agent: finds articles worth a refresh and says why: stale (not updated for
 * `staleAfterDays`), thin (fewer than `minWords` words), poorly linked (fewer than
 * `minInboundLinks` other articles link to it).
 */
import type { ArticleBoostReason, ArticleInput, ProposalOf } from '../agentWork.ts';
import { daysBetween, normalizeUrl, wordCount } from './text.ts';

export interface ArticleBoostSettings {
  staleAfterDays: number;
  minWords: number;
  minInboundLinks: number;
  /** At most this many proposals per run, the articles with the most reasons first. */
  maxProposals: number;
}

export const DEFAULT_ARTICLE_BOOST: ArticleBoostSettings = { staleAfterDays: 365, minWords: 300, minInboundLinks: 1, maxProposals: 50 };

/** How many other articles link to each article (by id); links to itself and repeated links count once per source. */
export function inboundLinkCounts(articles: readonly ArticleInput[]): Map<string, number> {
  const byUrl = new Map(articles.map((a) => [normalizeUrl(a.url), a.id]));
  const counts = new Map(articles.map((a) => [a.id, 0]));
  for (const a of articles) {
    const targets = new Set(a.links.map((l) => byUrl.get(normalizeUrl(l))));
    for (const target of targets) if (target !== undefined && target !== a.id) counts.set(target, counts.get(target)! + 1);
  }
  return counts;
}

/** `known`: a refresh the site has already (the same article and reasons, see `proposalKey`) is passed over and does not count toward `maxProposals`. */
export function proposeArticleBoosts(
  articles: readonly ArticleInput[],
  now: string,
  settings: ArticleBoostSettings = DEFAULT_ARTICLE_BOOST,
  known: (p: ProposalOf<'article_boost'>) => boolean = () => false,
): ProposalOf<'article_boost'>[] {
  const inbound = inboundLinkCounts(articles);
  const found: { proposal: ProposalOf<'article_boost'>; age: number }[] = [];
  for (const a of articles) {
    const reasons: ArticleBoostReason[] = [];
    const details: string[] = [];
    const lastTouched = a.updatedAt ?? a.publishedAt;
    const age = lastTouched ? daysBetween(lastTouched, now) : Number.POSITIVE_INFINITY;
    if (age > settings.staleAfterDays) {
      reasons.push('stale');
      details.push(
        lastTouched
          ? `${a.updatedAt ? 'last updated' : 'published'} ${lastTouched.slice(0, 10)}, ${age} days ago (stale after ${settings.staleAfterDays})`
          : 'no published or updated date',
      );
    }
    const count = wordCount(a.text);
    if (count < settings.minWords) {
      reasons.push('thin');
      details.push(`${count} words (minimum ${settings.minWords})`);
    }
    const links = inbound.get(a.id) ?? 0;
    if (links < settings.minInboundLinks) {
      reasons.push('poorly_linked');
      details.push(`linked from ${links} other article${links === 1 ? '' : 's'} (minimum ${settings.minInboundLinks})`);
    }
    if (reasons.length === 0) continue;
    const detail = `${details.join('; ')}.`;
    found.push({ proposal: { kind: 'article_boost', articleId: a.id, url: a.url, reasons, detail: detail[0]!.toUpperCase() + detail.slice(1) }, age });
  }
  return found
    .filter((f) => !known(f.proposal))
    .sort((x, y) => y.proposal.reasons.length - x.proposal.reasons.length || y.age - x.age)
    .slice(0, settings.maxProposals)
    .map((f) => f.proposal);
}
