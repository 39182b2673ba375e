import { AGENT_KEYS, AGENT_TEMPLATES, type AgentKey, type AgentSettings, DEFAULT_AGENT_SETTINGS, planAllowsAgent } from '../domain/agents.ts';
import { type WorkSettingsSchemas, visibleSettingsOf } from '../domain/agentSettingsSchemas.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';
import { type AgentRunDoc, lastAgentRun } from './agentRuns.ts';
import { getAgentSettings } from './agentSettings.ts';

/** One agent of a site as GET .../agents shows it (and PUT answers). */
export interface AgentView {
  agentKey: AgentKey;
  template: string;
  isActive: boolean;
  /** Whether the site's plan allows the agent (automations; Advanced for outreach). */
  planAllows: boolean;
  cadenceHours: number | null;
  /** Every setting with its current value (defaults where never set). */
  settings: Record<string, unknown>;
  defaults: Record<string, unknown>;
  lastRun: AgentRunDoc | null;
  updatedAt: string | null;
}

/** One agent's view, from the agentSettings and agentRuns read models. */
export async function agentViewOf(store: ReadModelStore, site: { id: string; plan: string }, agentKey: AgentKey, schemas: WorkSettingsSchemas): Promise<AgentView> {
  const [doc, lastRun] = await Promise.all([getAgentSettings(store, site.id, agentKey), lastAgentRun(store, site.id, agentKey)]);
  const stored: AgentSettings = doc ?? DEFAULT_AGENT_SETTINGS;
  return {
    agentKey,
    template: AGENT_TEMPLATES[agentKey],
    isActive: stored.active,
    planAllows: planAllowsAgent(site.plan, agentKey),
    cadenceHours: stored.cadenceHours ?? null,
    settings: visibleSettingsOf(agentKey, { ...DEFAULT_AGENT_SETTINGS, ...stored }, schemas),
    defaults: visibleSettingsOf(agentKey, DEFAULT_AGENT_SETTINGS, schemas),
    lastRun,
    updatedAt: doc?.updatedAt ?? null,
  };
}

/** All six agents of the site, in the spec's order (`list_agents` and GET .../agents). */
export const listAgents = (store: ReadModelStore, site: { id: string; plan: string }, schemas: WorkSettingsSchemas): Promise<AgentView[]> =>
  Promise.all(AGENT_KEYS.map((key) => agentViewOf(store, site, key, schemas)));
