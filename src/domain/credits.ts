import { type Decider, assertNever } from './decider.ts';
import { ImmutableMap } from './immutableMap.ts';

/** A team's AI credit ledger: grants from the operator, debits by the agent runs that used credits. */
export const creditsStream = (teamId: string) => `credits-${teamId}`;

export type CreditsEvent =
  | { type: 'CreditsGranted'; data: { teamId: string; amount: number; note: string | null; grantedAt: string } }
  | { type: 'CreditsDebited'; data: { teamId: string; siteId: string; runId: string; amount: number; debitedAt: string } };

export type CreditsCommand =
  | { type: 'GrantCredits'; data: { teamId: string; amount: number; note: string | null; now: string } }
  | { type: 'DebitCredits'; data: { teamId: string; siteId: string; runId: string; amount: number; now: string } };

export interface CreditsState {
  granted: number;
  debited: number;
  /**
   * Runs already debited (a set: the values are `true`): a run is debited once, however often its
   * success is seen. A persistent map: the team's ledger grows by a debit per run, and copying a
   * `Set` per event made its fold quadratic.
   */
  debitedRuns: ImmutableMap<true>;
}

export const creditBalance = (state: CreditsState) => state.granted - state.debited;

export class CreditsRuleError extends Error {}

export const creditsDecider: Decider<CreditsState, CreditsCommand, CreditsEvent> = {
  initialState: () => ({ granted: 0, debited: 0, debitedRuns: ImmutableMap.empty() }),
  evolve(state, event) {
    switch (event.type) {
      case 'CreditsGranted':
        return { ...state, granted: state.granted + event.data.amount };
      case 'CreditsDebited':
        return { ...state, debited: state.debited + event.data.amount, debitedRuns: state.debitedRuns.set(event.data.runId, true) };
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'GrantCredits': {
        const { teamId, amount, note, now } = command.data;
        if (!Number.isSafeInteger(amount) || amount <= 0) throw new CreditsRuleError('a grant is a positive whole number of credits');
        return [{ type: 'CreditsGranted', data: { teamId, amount, note, grantedAt: now } }];
      }
      case 'DebitCredits': {
        const { teamId, siteId, runId, amount, now } = command.data;
        // What a run used is a fact: it is recorded in full, even past zero (the next run is then refused).
        if (amount <= 0 || state.debitedRuns.has(runId)) return [];
        return [{ type: 'CreditsDebited', data: { teamId, siteId, runId, amount, debitedAt: now } }];
      }
      default:
        return assertNever(command);
    }
  },
};
