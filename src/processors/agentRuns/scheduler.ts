import { type AgentRunContext, requestAgentRun } from '../../commands/agentRuns.ts';
import { HOUR_MS } from '../../domain/agentRun.ts';
import { isAgentKey } from '../../domain/agents.ts';
import { ServiceError } from '../../domain/errors.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import { getAgentRun } from '../../readModels/agentRuns.ts';
import { AGENT_SETTINGS, type AgentSettingsDoc } from '../../readModels/agentSettings.ts';
import { getSite } from '../../readModels/sites.ts';

type Log = { warn?(obj: unknown, msg?: string): void };

/**
 * A scheduled run's id names its slot: the cadence's n-th period since the epoch. Every runner
 * computes the same id for the same slot, and the site's run ledger queues an id once.
 */
export const scheduledRunId = (siteId: string, agentKey: string, cadenceHours: number, nowMs: number) =>
  `sched-${siteId}-${agentKey}-${cadenceHours}h-${Math.floor(nowMs / (cadenceHours * HOUR_MS))}`;

/**
 * Queues a run for every active agent with a cadence whose current slot has none, through
 * `requestAgentRun` (the same gates; a refused slot is tried again on the next tick). Returns how many were queued.
 */
export async function scheduleDueRuns(deps: AgentRunContext & { readModels: ReadModelStore }, log?: Log): Promise<number> {
  const now = deps.clock.now().getTime();
  let queued = 0;
  for (const agent of await deps.readModels.find<AgentSettingsDoc>(AGENT_SETTINGS, { active: true })) {
    const cadence = agent.cadenceHours;
    if (typeof cadence !== 'number' || !isAgentKey(agent.agentKey)) continue;
    const runId = scheduledRunId(agent.siteId, agent.agentKey, cadence, now);
    if (await getAgentRun(deps.readModels, runId)) continue;
    const site = await getSite(deps.readModels, agent.siteId);
    if (!site) continue;
    try {
      const result = await requestAgentRun(deps, { teamId: site.teamId, siteId: site.id, agentKey: agent.agentKey, trigger: 'scheduled', requestedBy: null, runId });
      if (result.queued) queued++;
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      log?.warn?.({ err: error, siteId: site.id, agentKey: agent.agentKey }, 'scheduled agent run refused');
    }
  }
  return queued;
}
