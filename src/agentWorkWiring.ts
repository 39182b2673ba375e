import type { AgentWorkRegistry } from './agentWork/types.ts';
import type { WorkSettingsSchemas } from './domain/agentSettingsSchemas.ts';
import { agentWork, workSettingsSchemas } from './agentWork/index.ts';

/**
 * What the agents API and the agent runner need from each agent's work: the work itself (the
 * registry the runner calls) and each agent's work-settings schema (what PUT .../agents/{agentKey}
 * accepts and GET .../agents shows with its defaults). Services carry it; tests inject their own.
 */
export interface AgentWorkWiring {
  /** null: no agent work is installed; runs then fail with `work_unavailable`. */
  registry: AgentWorkRegistry | null;
  workSettingsSchemas: WorkSettingsSchemas;
}

/** The product's agents: the six agents' work (src/agentWork/) and their settings. */
export const productAgentWork: AgentWorkWiring = { registry: agentWork, workSettingsSchemas };
