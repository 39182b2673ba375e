import { proposeInternalLinks } from '../domain/agentWork/interlinking.ts';
import { workSettingsOf } from './settings.ts';
import type { AgentWork } from './types.ts';

/** Interlinking Agent: internal links between the site's articles (src/domain/agentWork/interlinking.ts). */
export const interlinkingWork: AgentWork = async (run, deps) => {
  const articles = await deps.articles(run.siteId);
  const proposals = proposeInternalLinks(articles, workSettingsOf('interlinking', run.settings));
  return { proposals, counts: { articlesRead: articles.length, linksProposed: proposals.length }, creditsUsed: 0 };
};
