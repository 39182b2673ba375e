import { DEFAULT_AGENT_SETTINGS, applyAgentChanges } from '../domain/agents.ts';
import { toDomainEvent } from '../lib/parseEvent.ts';
import { AGENT_SETTINGS, type AgentSettingsDoc, agentSettingsId } from '../readModels/agentSettings.ts';
import { type Projection, handles } from './projection.ts';

/** Agent settings per site and agent key (defaults apply to keys never configured). Version 2: cadence and work settings. */
export const agentSettingsProjection: Projection = {
  name: 'agentSettings',
  version: 2,
  collections: [AGENT_SETTINGS],
  canHandle: handles(['AgentConfigured']),
  async handle(recorded, w) {
    const event = toDomainEvent(recorded);
    if (event?.type !== 'AgentConfigured') return;
    const { siteId, agentKey, changes, configuredAt } = event.data;
    const id = agentSettingsId(siteId, agentKey);
    const current = await w.get<AgentSettingsDoc>(AGENT_SETTINGS, id);
    const base: AgentSettingsDoc = current ?? { id, siteId, agentKey, ...DEFAULT_AGENT_SETTINGS, updatedAt: configuredAt };
    const doc: AgentSettingsDoc = { ...base, ...applyAgentChanges(base, changes), updatedAt: configuredAt };
    await w.put(AGENT_SETTINGS, doc);
  },
};
