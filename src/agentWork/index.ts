/** Each agent's work, by agent key: what the agent runner calls for a run. */
import { aiPromptWork } from './aiPrompt.ts';
import { articleBoostWork } from './articleBoost.ts';
import { articleCreationWork } from './articleCreation.ts';
import { interlinkingWork } from './interlinking.ts';
import { outreachWork } from './outreach.ts';
import { sitePerformanceWork } from './sitePerformance.ts';
import type { AgentWorkRegistry } from './types.ts';

export const agentWork: AgentWorkRegistry = {
  article_creation: articleCreationWork,
  ai_prompt: aiPromptWork,
  article_boost: articleBoostWork,
  interlinking: interlinkingWork,
  site_performance: sitePerformanceWork,
  outreach: outreachWork,
};

export { workSettingsSchemas, workSettingsOf, defaultWorkSettings } from './settings.ts';
