import { proposeArticleTopics } from '../domain/agentWork/articleCreation.ts';
import { workSettingsOf } from './settings.ts';
import type { AgentWork } from './types.ts';

/** Search Opportunity Agent: topics the site leaves uncovered (src/domain/agentWork/articleCreation.ts). */
export const articleCreationWork: AgentWork = async (run, deps) => {
  const articles = await deps.articles(run.siteId);
  const proposals = proposeArticleTopics(articles, workSettingsOf('article_creation', run.settings));
  return { proposals, counts: { articlesRead: articles.length, topicsProposed: proposals.length }, creditsUsed: 0 };
};
