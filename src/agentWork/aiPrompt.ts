import { proposeAiPrompts } from '../domain/agentWork/aiPrompt.ts';
import { refineProposals } from './refine.ts';
import { workSettingsOf } from './settings.ts';
import type { AgentWork } from './types.ts';

/** AI Opportunity Agent: questions asked of AI assistants and the article answering each (src/domain/agentWork/aiPrompt.ts), refined by the model when one is configured. */
export const aiPromptWork: AgentWork = async (run, deps) => {
  const articles = await deps.articles(run.siteId);
  const heuristic = proposeAiPrompts(articles, workSettingsOf('ai_prompt', run.settings), deps.proposedBefore);
  const { proposals, counts, creditsUsed } = await refineProposals('ai_prompt', run, deps, heuristic, articles);
  const unanswered = proposals.filter((p) => p.articleId === null).length;
  return { proposals, counts: { articlesRead: articles.length, questionsProposed: proposals.length, unanswered, ...counts }, creditsUsed };
};
