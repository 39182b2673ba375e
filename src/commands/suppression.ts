import { normaliseEmail, suppressionDecider, suppressionStream } from '../domain/suppression.ts';
import { teamStream } from '../domain/team.ts';
import type { SiteDoc } from '../readModels/sites.ts';
import type { CommandContext } from './context.ts';
import { handleCommand } from './handleCommand.ts';
import { TenancyError } from './tenancy.ts';

/**
 * Adds a contact to the team-wide suppression list. ContactSuppressed carries a siteId (webhook
 * envelopes need one): with `siteId` one event for that site, without it one event per site of the team.
 */
export async function suppressContact(
  ctx: CommandContext,
  input: { teamId: string; email: string; reason: string; source: string; siteId?: string },
) {
  if ((await ctx.events.readStream(teamStream(input.teamId))).length === 0) throw new TenancyError(`team ${input.teamId} not found`);
  const sites = await ctx.readModels.find<SiteDoc>('sites', { teamId: input.teamId }, { sortBy: 'id' });
  let siteIds = sites.map((s) => s.id);
  if (input.siteId) {
    if (!siteIds.includes(input.siteId)) throw new TenancyError(`site ${input.siteId} does not belong to team ${input.teamId}`);
    siteIds = [input.siteId];
  }
  if (siteIds.length === 0) throw new TenancyError(`team ${input.teamId} has no site`);
  const email = normaliseEmail(input.email);
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new TenancyError(`not an email address: ${input.email}`);
  const result = await handleCommand(ctx.events, suppressionStream(input.teamId), suppressionDecider, {
    type: 'SuppressContact',
    data: { teamId: input.teamId, siteIds, email, reason: input.reason, source: input.source, now: ctx.clock.now().getTime() },
  });
  return { email, siteIds, suppressed: result.events.length > 0, position: result.position };
}
