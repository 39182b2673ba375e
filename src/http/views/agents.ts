import type { FastifyInstance } from 'fastify';
import { onDemandRunsLeft, requestAgentRun } from '../../commands/agentRuns.ts';
import { updateAgent } from '../../commands/agents.ts';
import { creditsOf } from '../../commands/credits.ts';
import type { AgentKey } from '../../domain/agents.ts';
import { type AgentRunFilters, listAgentRuns } from '../../readModels/agentRuns.ts';
import { agentViewOf, listAgents } from '../../readModels/agentViews.ts';
import type { SiteDoc } from '../../readModels/sites.ts';
import { agentOf, runOf } from '../routes/agentSchemas.ts';

/**
 * What the agents API answers, for the REST routes and the MCP tools alike (the plan gate runs
 * before these: the route's preValidation, the tool's handler).
 */

/** GET .../agents and `list_agents`: the six agents, the on-demand run allowance and the credits. */
export async function agentsOverview(app: FastifyInstance, site: SiteDoc) {
  const [agents, left, credits] = await Promise.all([
    listAgents(app.readModels, site, app.agentWork.workSettingsSchemas),
    onDemandRunsLeft(app, site.id),
    creditsOf(app, site.teamId),
  ]);
  return {
    agents: agents.map(agentOf),
    onDemandRuns: { perHour: app.config.AGENT_RUNS_PER_HOUR, leftThisHour: left },
    credits: { enforced: app.config.AI_CREDITS_ENFORCED, balance: credits.balance },
  };
}

/** GET .../agents/runs and `list_agent_runs`. */
export async function agentRunsPage(app: FastifyInstance, siteId: string, query: AgentRunFilters & { limit: number; cursor?: string | undefined }) {
  const { limit, cursor, ...filters } = query;
  const page = await listAgentRuns(app.readModels, siteId, filters, cursor, limit);
  return { runs: page.runs.map(runOf), hasMore: page.hasMore, nextCursor: page.nextCursor };
}

/** PUT .../agents/{agentKey} and `update_agent`: the change, then the agent as it now reads. */
export async function updateAgentNow(app: FastifyInstance, site: SiteDoc, agentKey: AgentKey, body: Record<string, unknown>) {
  const schemas = app.agentWork.workSettingsSchemas;
  const result = await updateAgent(app, { siteId: site.id, plan: site.plan, agentKey, body, workSettingsSchemas: schemas });
  await app.waitForWrite(result.position);
  return { agent: agentOf(await agentViewOf(app.readModels, site, agentKey, schemas)) };
}

/** POST .../agents/{agentKey}/run and `run_agent`: one on-demand run, counted in the site's hourly allowance. */
export async function runAgentNow(app: FastifyInstance, site: SiteDoc, agentKey: AgentKey, requestedBy: string) {
  const result = await requestAgentRun(app, { teamId: site.teamId, siteId: site.id, agentKey, trigger: 'on_demand', requestedBy });
  // The run is queued and counted against the hour's allowance: a 503 would have the client queue another.
  await app.waitForWrite(result.position, 'answer');
  return { run: runOf(result.run) };
}
