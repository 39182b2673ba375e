import { z } from 'zod';
import type { AgentWorkRegistry } from './agentWork/types.ts';
import type { WorkSettingsSchemas } from './domain/agentSettingsSchemas.ts';

/**
 * What the agents API and the agent runner need from each agent's work: the work itself (the
 * registry the runner calls) and each agent's work-settings schema (what PUT .../agents/{agentKey}
 * accepts and GET .../agents shows with its defaults). Services carry it; tests inject their own.
 */
export interface AgentWorkWiring {
  /** null: no agent work is installed in this build; runs then fail with `work_unavailable`. */
  registry: AgentWorkRegistry | null;
  workSettingsSchemas: WorkSettingsSchemas;
}

const none = z.object({}).strict();

/**
 * ===== MERGE POINT (the one place the product is wired to the agents' work) =====
 * Replace with:
 *   import { agentWork } from './agentWork/index.ts';
 *   import { workSettingsSchemas } from './agentWork/settings.ts';
 *   export const productAgentWork: AgentWorkWiring = { registry: agentWork, workSettingsSchemas };
 */
export const productAgentWork: AgentWorkWiring = {
  registry: null,
  workSettingsSchemas: { article_creation: none, ai_prompt: none, article_boost: none, interlinking: none, site_performance: none, outreach: none },
};
