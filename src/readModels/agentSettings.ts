import type { AgentSettings } from '../domain/agents.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `agentSettings` read model, written by the agentSettings projection. */
export const AGENT_SETTINGS = 'agentSettings';

/** One agent's settings on one site; keys never configured have no document (their defaults apply). */
export interface AgentSettingsDoc extends AgentSettings {
  [key: string]: unknown;
  id: string;
  siteId: string;
  agentKey: string;
  updatedAt: string;
}

export const agentSettingsId = (siteId: string, agentKey: string) => `${siteId}|${agentKey}`;

export const getAgentSettings = (store: ReadModelStore, siteId: string, agentKey: string) =>
  store.get<AgentSettingsDoc>(AGENT_SETTINGS, agentSettingsId(siteId, agentKey));
