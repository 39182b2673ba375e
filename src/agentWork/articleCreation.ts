import { proposeArticleTopics } from '../domain/agentWork/articleCreation.ts';
import { refineProposals } from './refine.ts';
import { workSettingsOf } from './settings.ts';
import type { AgentWork } from './types.ts';

/** Search Opportunity Agent: topics the site leaves uncovered (src/domain/agentWork/articleCreation.ts), titled by the model when one is configured. */
export const articleCreationWork: AgentWork = async (run, deps) => {
  const articles = await deps.articles(run.siteId);
  const heuristic = proposeArticleTopics(articles, workSettingsOf('article_creation', run.settings), deps.proposedBefore);
  const { proposals, counts, creditsUsed } = await refineProposals('article_creation', run, deps, heuristic, articles);
  return { proposals, counts: { articlesRead: articles.length, topicsProposed: proposals.length, ...counts }, creditsUsed };
};
