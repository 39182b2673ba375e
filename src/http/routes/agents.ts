import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { assertPlanAllows } from '../../commands/agentRuns.ts';
import { AGENT_KEYS, type AgentKey, CADENCE_HOURS_MAX, isAgentKey } from '../../domain/agents.ts';
import { RUN_STATUSES } from '../../domain/agentRun.ts';
import { agentNotFound } from '../../domain/errors.ts';
import { isoBeforeParam, isoParam, pageQuery } from '../pagination.ts';
import { errors, noQuery, siteParams } from '../schemas.ts';
import { refuseBody } from '../refuseBody.ts';
import { agentsOverview, agentRunsPage, runAgentNow, updateAgentNow } from '../views/agents.ts';
import { agentObject, runObject } from './agentSchemas.ts';
import { actingFor } from '../actingFor.ts';

const agentParams = siteParams.extend({ agentKey: z.string().min(1).max(100).meta({ description: AGENT_KEYS.join(', ') }) });

export const updateBody = z
  .object({
    isActive: z.boolean().optional(),
    cadenceHours: z.number().int().min(1).max(CADENCE_HOURS_MAX).nullable().optional(),
    settings: z.record(z.string(), z.unknown()).optional().meta({ description: "only the keys to change; each agent's keys are listed by GET .../agents" }),
  })
  // Unknown keys reach the handler, which names them (UNKNOWN_SETTING) instead of a generic validation error;
  // documented as what they are, refused (the catch-all read as "any other property is allowed").
  .catchall(z.unknown())
  .meta({ additionalProperties: false });

export const runsQuery = pageQuery.extend({
  agentKey: z.enum(AGENT_KEYS).optional(),
  status: z.enum(RUN_STATUSES).optional(),
  queuedAfter: isoParam.optional(),
  queuedBefore: isoBeforeParam.optional(),
});

const agentKeyOf = (request: FastifyRequest): AgentKey => {
  const { agentKey } = request.params as { agentKey: string };
  if (!isAgentKey(agentKey)) throw agentNotFound(agentKey);
  return agentKey;
};

/** The agent endpoints: list and tune the six template agents, run one on demand, list runs. */
const plugin: FastifyPluginAsyncZod = async (app) => {
  const path = '/api/v1/sites/:siteId/agents';
  // Runs after authentication, before the body is validated: an unknown agent or a plan without automations comes first.
  const gate = async (request: FastifyRequest) => {
    const agentKey = (request.params as { agentKey?: string }).agentKey === undefined ? null : agentKeyOf(request);
    assertPlanAllows(request.site!.plan, agentKey);
  };

  app.get(
    path,
    {
      config: { access: { scope: 'agents:read', site: true } },
      preValidation: gate,
      schema: {
        summary: "List the site's six agents: settings with defaults, plan, last run; the run limit and credits",
        tags: ['agents'],
        params: siteParams,
        querystring: noQuery,
        response: {
          200: z.object({
            agents: z.array(agentObject),
            onDemandRuns: z.object({ perHour: z.number().int(), leftThisHour: z.number().int() }),
            credits: z.object({ enforced: z.boolean(), balance: z.number() }),
          }),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async function listAgentsRoute(request) {
      return agentsOverview(app, request.site!);
    },
  );

  app.get(
    `${path}/runs`,
    {
      config: { access: { scope: 'agents:read', site: true } },
      preValidation: gate,
      schema: {
        summary: 'List agent runs, newest first, with a cursor',
        tags: ['agents'],
        params: siteParams,
        querystring: runsQuery,
        response: { 200: z.object({ runs: z.array(runObject), hasMore: z.boolean(), nextCursor: z.string().nullable() }), ...errors(400, 401, 403, 404) },
      },
    },
    async function listAgentRunsRoute(request) {
      return agentRunsPage(app, request.site!.id, request.query);
    },
  );

  app.put(
    `${path}/:agentKey`,
    {
      config: { access: { scope: 'agents:write', site: true } },
      preValidation: gate,
      schema: {
        summary: 'Toggle or tune an agent (only the fields given change)',
        tags: ['agents'],
        params: agentParams,
        body: updateBody,
        response: { 200: z.object({ agent: agentObject }), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async function updateAgentRoute(request) {
      return updateAgentNow(actingFor(app, request), request.site!, agentKeyOf(request), request.body);
    },
  );

  app.post(
    `${path}/:agentKey/run`,
    {
      config: { access: { scope: 'agents:write', site: true } },
      preValidation: gate,
      preHandler: refuseBody,
      schema: {
        summary: 'Run an agent now (202: queued); the agent must be active; 5 per hour per site with MCP',
        tags: ['agents'],
        params: agentParams,
        response: { 202: z.object({ run: runObject }), ...errors(400, 401, 402, 403, 404, 409, 429) },
      },
    },
    async function runAgentRoute(request, reply) {
      const credential = request.credential!;
      return reply.status(202).send(await runAgentNow(actingFor(app, request), request.site!, agentKeyOf(request), credential.oauthClientId ?? credential.id));
    },
  );
};

export const agentRoutes = fp(plugin, { name: 'agent-routes', dependencies: ['services', 'read-your-writes', 'authenticate'], encapsulate: true });
