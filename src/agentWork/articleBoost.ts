import { proposeArticleBoosts } from '../domain/agentWork/articleBoost.ts';
import { refineProposals } from './refine.ts';
import { workSettingsOf } from './settings.ts';
import type { AgentWork } from './types.ts';

/** Article Boost Agent: stale, thin and poorly linked articles (src/domain/agentWork/articleBoost.ts), ranked and advised by the model when one is configured. */
export const articleBoostWork: AgentWork = async (run, deps) => {
  const articles = await deps.articles(run.siteId);
  const heuristic = proposeArticleBoosts(articles, run.now, workSettingsOf('article_boost', run.settings), deps.proposedBefore);
  const { proposals, counts, creditsUsed } = await refineProposals('article_boost', run, deps, heuristic, articles);
  const count = (reason: string) => proposals.filter((p) => p.reasons.some((r) => r === reason)).length;
  return {
    proposals,
    counts: { articlesRead: articles.length, refreshesProposed: proposals.length, stale: count('stale'), thin: count('thin'), poorlyLinked: count('poorly_linked'), ...counts },
    creditsUsed,
  };
};
