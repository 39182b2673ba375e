import { type AgentRunContext, requestAgentRun } from '../../commands/agentRuns.ts';
import { HOUR_MS } from '../../domain/agentRun.ts';
import { isAgentKey } from '../../domain/agents.ts';
import { ServiceError } from '../../domain/errors.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import { getAgentRun, lastScheduledRun } from '../../readModels/agentRuns.ts';
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
 * Queues a run for every active agent with a cadence whose current slot has none, and whose last
 * scheduled run was queued (nine tenths of) a cadence ago or more, through `requestAgentRun` (the same gates; a
 * refused slot is tried again on the next tick). Returns how many were queued. (A new cadence names
 * new slots: without the second rule each change of `cadenceHours` queued a run at once, outside the
 * on-demand limit, 168 an hour.)
 * A refusal is logged when it first happens or its cause changes, not on every tick: `refusals`
 * (kept by the caller between ticks) holds the code last logged per site and agent.
 */
export async function scheduleDueRuns(deps: AgentRunContext & { readModels: ReadModelStore }, log?: Log, refusals = new Map<string, string>()): Promise<number> {
  const now = deps.clock.now().getTime();
  let queued = 0;
  for (const agent of await deps.readModels.find<AgentSettingsDoc>(AGENT_SETTINGS, { active: true })) {
    const cadence = agent.cadenceHours;
    if (typeof cadence !== 'number' || !isAgentKey(agent.agentKey)) continue;
    const runId = scheduledRunId(agent.siteId, agent.agentKey, cadence, now);
    if (await getAgentRun(deps.readModels, runId)) continue;
    const last = await lastScheduledRun(deps.readModels, agent.siteId, agent.agentKey);
    // Nine tenths: ticks come when they come, and a run a tick late must not push the next a period on.
    if (last && now - Date.parse(last.queuedAt) < 0.9 * cadence * HOUR_MS) continue;
    const site = await getSite(deps.readModels, agent.siteId);
    if (!site) continue;
    const which = `${site.id}/${agent.agentKey}`;
    try {
      const result = await requestAgentRun(deps, { teamId: site.teamId, siteId: site.id, agentKey: agent.agentKey, trigger: 'scheduled', requestedBy: null, runId });
      if (result.queued) queued++;
      refusals.delete(which);
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      if (refusals.get(which) === error.code) continue;
      refusals.set(which, error.code);
      log?.warn?.({ err: error, siteId: site.id, agentKey: agent.agentKey }, 'scheduled agent run refused (logged again only when its cause changes)');
    }
  }
  return queued;
}
