import { proposeAiPrompts } from '../domain/agentWork/aiPrompt.ts';
import { workSettingsOf } from './settings.ts';
import type { AgentWork } from './types.ts';

/** AI Opportunity Agent: questions asked of AI assistants and the article answering each (src/domain/agentWork/aiPrompt.ts). */
export const aiPromptWork: AgentWork = async (run, deps) => {
  const articles = await deps.articles(run.siteId);
  const proposals = proposeAiPrompts(articles, workSettingsOf('ai_prompt', run.settings));
  const unanswered = proposals.filter((p) => p.kind === 'ai_prompt' && p.articleId === null).length;
  return { proposals, counts: { articlesRead: articles.length, questionsProposed: proposals.length, unanswered }, creditsUsed: 0 };
};
