import { type AgentKey, type AgentSettings, agentsDecider, agentsStream, settingsOf } from '../domain/agents.ts';
import { type WorkSettingsSchemas, parseAgentUpdate } from '../domain/agentSettingsSchemas.ts';
import { aggregateStream } from './aggregateStream.ts';
import { assertPlanAllows } from './agentRuns.ts';
import { siteStream } from '../domain/site.ts';
import type { CommandContext } from './context.ts';
import { handleCommand } from './handleCommand.ts';
import { TenancyError } from './tenancy.ts';

/** Turns a site's agent on or off and sets its auto-reply; an `AgentConfigured` fact in the site's agents stream. */
export async function configureAgent(ctx: CommandContext, input: { siteId: string; agentKey: AgentKey; changes: Partial<AgentSettings> }) {
  if ((await ctx.events.readStream(siteStream(input.siteId))).length === 0) throw new TenancyError(`site ${input.siteId} not found`);
  const result = await handleCommand(ctx, agentsStream(input.siteId), agentsDecider, {
    type: 'ConfigureAgent',
    data: { ...input, now: ctx.clock.now().toISOString() },
  });
  return { position: result.position };
}

/**
 * PUT .../agents/{agentKey}: the plan gate, then the body checked against the agent's schema
 * (parseAgentUpdate), then one `AgentConfigured` with what changed (nothing when nothing did).
 */
export async function updateAgent(
  ctx: CommandContext,
  input: { siteId: string; plan: string; agentKey: AgentKey; body: Record<string, unknown>; workSettingsSchemas: WorkSettingsSchemas },
) {
  assertPlanAllows(input.plan, input.agentKey);
  const { state } = await aggregateStream(ctx.events, agentsStream(input.siteId), agentsDecider);
  const changes = parseAgentUpdate(input.agentKey, input.body, settingsOf(state, input.agentKey), input.workSettingsSchemas);
  return configureAgent(ctx, { siteId: input.siteId, agentKey: input.agentKey, changes });
}
