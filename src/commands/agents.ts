import { type AgentKey, type AgentSettings, agentsDecider, agentsStream } from '../domain/agents.ts';
import { siteStream } from '../domain/site.ts';
import type { CommandContext } from './context.ts';
import { handleCommand } from './handleCommand.ts';
import { TenancyError } from './tenancy.ts';

/** Turns a site's agent on or off and sets its auto-reply; an `AgentConfigured` fact in the site's agents stream. */
export async function configureAgent(ctx: CommandContext, input: { siteId: string; agentKey: AgentKey; changes: Partial<AgentSettings> }) {
  if ((await ctx.events.readStream(siteStream(input.siteId))).length === 0) throw new TenancyError(`site ${input.siteId} not found`);
  const result = await handleCommand(ctx.events, agentsStream(input.siteId), agentsDecider, {
    type: 'ConfigureAgent',
    data: { ...input, now: ctx.clock.now().toISOString() },
  });
  return { position: result.position };
}
