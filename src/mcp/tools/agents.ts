import { z } from 'zod';
import { isoDateTime, utcBound } from '../../http/pagination.ts';
import { assertPlanAllows } from '../../commands/agentRuns.ts';
import { AGENT_KEYS, type AgentKey, isAgentKey } from '../../domain/agents.ts';
import { agentNotFound } from '../../domain/errors.ts';
import { runsQuery, updateBody } from '../../http/routes/agents.ts';
import { agentRunsPage, agentsOverview, runAgentNow, updateAgentNow } from '../../http/views/agents.ts';
import { pageInput } from './paging.ts';
import { type McpTool, defineTool } from './tool.ts';

// A string rather than an enum, so that an unknown key is AGENT_NOT_FOUND as on REST.
const agentKey = z.string().min(1).max(100).describe(`The agent: ${AGENT_KEYS.join(', ')}`);

/** The REST routes' gate: a known agent, then the site's plan (automations; Advanced for outreach). */
const gated = (plan: string, key: string | null): AgentKey | null => {
  if (key !== null && !isAgentKey(key)) throw agentNotFound(key);
  assertPlanAllows(plan, key);
  return key;
};
/** The same gate on the raw arguments, before they are validated (REST checks it before the body). */
const gateOnSite: McpTool['gate'] = (_args, site) => void gated(site.plan, null);
const gateOnAgent: McpTool['gate'] = (args, site) => void gated(site.plan, typeof args['agentKey'] === 'string' ? args['agentKey'] : null);

/** The agents API (REST: /api/v1/sites/{siteId}/agents…), calling the same views and commands. */
export const agentTools: McpTool[] = [
  defineTool({
    name: 'list_agents',
    gate: gateOnSite,
    title: 'List agents',
    description:
      "Lists the site's six agents (article creation, AI prompt, article boost, interlinking, site performance, outreach): whether each is active and allowed by the plan, its cadence, settings with their defaults and last run; plus the on-demand runs left this hour and the AI credit balance. Needs a plan with automations.",
    scope: 'agents:read',
    input: {},
    run: async (_input, { app, site }) => {
      gated(site.plan, null);
      return agentsOverview(app, site);
    },
  }),
  defineTool({
    name: 'list_agent_runs',
    gate: gateOnSite,
    title: 'List agent runs',
    description:
      "Lists the site's agent runs, newest first, with status (queued, running, succeeded, failed), counts, proposals and credits used. Filter by agentKey, status or queuedAfter/queuedBefore; pass nextCursor back as cursor for the next page.",
    scope: 'agents:read',
    input: {
      ...pageInput,
      agentKey: runsQuery.shape.agentKey,
      status: runsQuery.shape.status,
      queuedAfter: isoDateTime.optional(),
      queuedBefore: isoDateTime.optional(),
    },
    run: async ({ siteId: _siteId, queuedAfter, queuedBefore, ...query }, { app, site }) => {
      gated(site.plan, null);
      return agentRunsPage(app, site.id, {
        ...query,
        ...(queuedAfter ? { queuedAfter: utcBound(queuedAfter, 'after') } : {}),
        ...(queuedBefore ? { queuedBefore: utcBound(queuedBefore, 'before') } : {}),
      });
    },
  }),
  defineTool({
    name: 'update_agent',
    gate: gateOnAgent,
    title: 'Update an agent',
    description:
      "Turns an agent on or off (isActive), sets its cadence in hours (null: on demand only) or changes settings; only the fields given change. Each agent's setting keys and defaults are shown by list_agents. Answers the agent as it now reads.",
    scope: 'agents:write',
    write: true,
    annotations: { destructiveHint: false, idempotentHint: true },
    input: { agentKey, ...updateBody.shape },
    // A key that is no setting of the agent is UNKNOWN_SETTING, named, as on PUT /agents/{key}.
    otherKeys: 'pass',
    run: async ({ siteId: _siteId, agentKey: key, ...body }, { app, site }) => updateAgentNow(app, site, gated(site.plan, key)!, body),
  }),
  defineTool({
    name: 'run_agent',
    gate: gateOnAgent,
    title: 'Run an agent now',
    description:
      'Queues an on-demand run of an active agent and answers the queued run (follow it with list_agent_runs). At most 5 on-demand runs per hour per site, counted together with the REST API (RATE_LIMITED beyond); AI credits are needed while enforced.',
    scope: 'agents:write',
    write: true,
    annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: true },
    input: { agentKey },
    run: async ({ agentKey: key }, { app, site, credential }) => runAgentNow(app, site, gated(site.plan, key)!, credential.oauthClientId ?? credential.id),
  }),
];
