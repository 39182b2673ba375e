import { type Decider, assertNever } from './decider.ts';

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
  /** Runs already debited: a run is debited once, however often its success is seen. */
  debitedRuns: ReadonlySet<string>;
}

export const creditBalance = (state: CreditsState) => state.granted - state.debited;

export class CreditsRuleError extends Error {}

export const creditsDecider: Decider<CreditsState, CreditsCommand, CreditsEvent> = {
  initialState: () => ({ granted: 0, debited: 0, debitedRuns: new Set() }),
  evolve(state, event) {
    switch (event.type) {
      case 'CreditsGranted':
        return { ...state, granted: state.granted + event.data.amount };
      case 'CreditsDebited':
        return { ...state, debited: state.debited + event.data.amount, debitedRuns: new Set([...state.debitedRuns, event.data.runId]) };
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
