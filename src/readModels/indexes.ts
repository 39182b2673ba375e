import type { IndexDeclarations } from '../ports/readModelStore.ts';
import { AGENT_RUN_INDEXES, AGENT_RUNS } from './agentRuns.ts';
import { ARTICLE_INDEXES, ARTICLES } from './articles.ts';
import { CONVERSATION_INDEXES, CONVERSATIONS } from './conversations.ts';
import { CONVERSATION_MESSAGE_INDEXES, CONVERSATION_MESSAGES } from './messages.ts';
import { OPPORTUNITIES, OPPORTUNITY_INDEXES } from './opportunities.ts';
import { SUPPRESSION_INDEXES, SUPPRESSIONS } from './suppressions.ts';

/** Every index the read-model adapters keep, declared up front (docs/readModels.md lists them). */
export const READ_MODEL_INDEXES: IndexDeclarations = {
  [CONVERSATIONS]: CONVERSATION_INDEXES,
  [CONVERSATION_MESSAGES]: CONVERSATION_MESSAGE_INDEXES,
  [OPPORTUNITIES]: OPPORTUNITY_INDEXES,
  [SUPPRESSIONS]: SUPPRESSION_INDEXES,
  [AGENT_RUNS]: AGENT_RUN_INDEXES,
  [ARTICLES]: ARTICLE_INDEXES,
};
