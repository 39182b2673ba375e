import { normaliseEmail } from '../domain/email.ts';
import { suppressionDecider, suppressionStream } from '../domain/suppression.ts';
import { teamStream } from '../domain/team.ts';
import type { CommandContext } from './context.ts';
import { handleCommand } from './handleCommand.ts';
import { TenancyError } from './tenancy.ts';

export interface SuppressContactInput {
  teamId: string;
  /** Every site of the team, in the order events are written for them; the caller loads them. */
  teamSiteIds: readonly string[];
  email: string;
  reason: string;
  source: string;
  siteId?: string;
}

/**
 * Adds a contact to the team-wide suppression list. ContactSuppressed carries a siteId (webhook
 * envelopes need one): with `siteId` one event for that site, without it one event per site of the team.
 */
/** `metadata`: added to the event's (the Outreach Agent's worker names itself, as on its other events). */
export async function suppressContact(ctx: CommandContext, input: SuppressContactInput, metadata: Record<string, unknown> = {}) {
  if ((await ctx.events.readStream(teamStream(input.teamId))).length === 0) throw new TenancyError(`team ${input.teamId} not found`);
  let siteIds = [...input.teamSiteIds];
  if (input.siteId) {
    if (!siteIds.includes(input.siteId)) throw new TenancyError(`site ${input.siteId} does not belong to team ${input.teamId}`);
    siteIds = [input.siteId];
  }
  if (siteIds.length === 0) throw new TenancyError(`team ${input.teamId} has no site`);
  const email = normaliseEmail(input.email);
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new TenancyError(`not an email address: ${input.email}`);
  const result = await handleCommand(ctx, suppressionStream(input.teamId), suppressionDecider, {
    type: 'SuppressContact',
    data: { teamId: input.teamId, siteIds, email, reason: input.reason, source: input.source, now: ctx.clock.now().getTime() },
  }, metadata);
  return { email, siteIds, suppressed: result.events.length > 0, position: result.position };
}

/**
 * Takes a contact off the team-wide suppression list (ContactUnsuppressed; nothing when it is not
 * on the list). Ingestion and the agent fold the same stream, so the address is reachable again.
 */
export async function unsuppressContact(ctx: CommandContext, input: { teamId: string; siteId: string; email: string; source: string }) {
  const email = normaliseEmail(input.email);
  const result = await handleCommand(ctx, suppressionStream(input.teamId), suppressionDecider, {
    type: 'UnsuppressContact',
    data: { teamId: input.teamId, siteId: input.siteId, email, source: input.source, now: ctx.clock.now().getTime() },
  });
  return { email, removed: result.events.length > 0, position: result.position };
}
