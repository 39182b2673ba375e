import { proposeInternalLinks } from '../domain/agentWork/interlinking.ts';
import { refineProposals } from './refine.ts';
import { workSettingsOf } from './settings.ts';
import type { AgentWork } from './types.ts';

/** Interlinking Agent: internal links between the site's articles (src/domain/agentWork/interlinking.ts), filtered and re-anchored by the model when one is configured. */
export const interlinkingWork: AgentWork = async (run, deps) => {
  const articles = await deps.articles(run.siteId);
  const heuristic = proposeInternalLinks(articles, workSettingsOf('interlinking', run.settings));
  const { proposals, counts, creditsUsed } = await refineProposals('interlinking', run, deps, heuristic, articles);
  return { proposals, counts: { articlesRead: articles.length, linksProposed: proposals.length, ...counts }, creditsUsed };
};
