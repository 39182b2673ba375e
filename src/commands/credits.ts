import { creditBalance, creditsDecider, creditsStream } from '../domain/credits.ts';
import { aggregateStream } from './aggregateStream.ts';
import type { CommandContext } from './context.ts';
import { handleCommand } from './handleCommand.ts';
import { TenancyError, requireTeam } from './tenancy.ts';

/** Adds AI credits to a team's ledger (`CreditsGranted`), from the CLI. */
export async function grantCredits(ctx: CommandContext, input: { teamId: string; amount: number; note?: string | null }) {
  await requireTeam(ctx, input.teamId);
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw new TenancyError('the amount must be a positive whole number');
  const result = await handleCommand(ctx, creditsStream(input.teamId), creditsDecider, {
    type: 'GrantCredits',
    data: { teamId: input.teamId, amount: input.amount, note: input.note ?? null, now: ctx.clock.now().toISOString() },
  });
  return { position: result.position, ...(await creditsOf(ctx, input.teamId)) };
}

/** What a run used (`CreditsDebited`), once per run however often it is asked. */
export async function debitCredits(ctx: CommandContext, input: { teamId: string; siteId: string; runId: string; amount: number }) {
  const result = await handleCommand(ctx, creditsStream(input.teamId), creditsDecider, {
    type: 'DebitCredits',
    data: { ...input, now: ctx.clock.now().toISOString() },
  });
  return { debited: result.events.length > 0, position: result.position };
}

/** The team's ledger totals, read from its stream (the write side's view, used by the credit gate). */
export async function creditsOf(ctx: Pick<CommandContext, 'events'>, teamId: string) {
  const { state } = await aggregateStream(ctx.events, creditsStream(teamId), creditsDecider);
  return { teamId, granted: state.granted, debited: state.debited, balance: creditBalance(state) };
}
