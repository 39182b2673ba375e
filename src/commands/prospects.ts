import { type Prospect, type ProspectCommand, type ProspectSkipReason, prospectsDecider, prospectsStream } from '../domain/prospects.ts';
import { siteStream } from '../domain/site.ts';
import { aggregateStreamFolding } from './aggregateStream.ts';
import type { CommandContext } from './context.ts';
import { handleCommand } from './handleCommand.ts';
import { TenancyError } from './tenancy.ts';

export interface ProspectsSite {
  siteId: string;
  teamId: string;
}

/** Adds a list of prospects to the site's prospects stream (`ProspectsImported`); ones already known unchanged are left out. */
export async function importProspects(ctx: CommandContext, input: ProspectsSite & { prospects: Prospect[] }) {
  if ((await ctx.events.readStream(siteStream(input.siteId))).length === 0) throw new TenancyError(`site ${input.siteId} not found`);
  const importId = ctx.newId();
  const result = await prospectCommand(ctx, input.siteId, {
    type: 'ImportProspects',
    data: { siteId: input.siteId, teamId: input.teamId, occurredAt: ctx.clock.now().getTime(), importId, prospects: input.prospects },
  });
  const imported = result.events[0]?.type === 'ProspectsImported' ? result.events[0].data.prospects.length : 0;
  return { importId: imported > 0 ? importId : null, imported, unchanged: input.prospects.length - imported, position: result.position };
}

export const loadProspects = async (ctx: CommandContext, siteId: string) => (await aggregateStreamFolding(ctx.events, prospectsStream(siteId), prospectsDecider)).state;

/** Records a pitch before it is sent: refused (ProspectRuleError DAILY_SEND_CAP_REACHED) once the day's cap is used. */
export const recordPitch = (ctx: CommandContext, input: ProspectsSite & { prospectUrl: string; contactEmail: string; conversationId: string; runId: string; dailySendCap: number }) =>
  prospectCommand(ctx, input.siteId, { type: 'RecordPitch', data: { ...input, occurredAt: ctx.clock.now().getTime() } });

export const skipProspect = (ctx: CommandContext, input: ProspectsSite & { prospectUrl: string; reason: ProspectSkipReason; detail: string; runId: string }) =>
  prospectCommand(ctx, input.siteId, { type: 'SkipProspect', data: { ...input, occurredAt: ctx.clock.now().getTime() } });

/**
 * A site's prospects stream grows with every import (up to 5,000 prospects each) and every prospect
 * a run pitches or skips, and a run decides on it once per prospect: its fold is kept and carried on
 * instead of reading and parsing the whole stream each time (on the thread every request shares).
 */
const prospectCommand = (ctx: CommandContext, siteId: string, command: ProspectCommand) =>
  handleCommand(ctx, prospectsStream(siteId), prospectsDecider, command, {}, { aggregate: aggregateStreamFolding });
