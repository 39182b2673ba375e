import type { BillingStatus } from '../domain/team.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `teams` read model, written by the teams projection. */
export const TEAMS = 'teams';

export interface TeamDoc {
  [key: string]: unknown;
  id: string;
  name: string;
  billingStatus: BillingStatus;
  createdAt: string;
}

export const getTeam = (store: ReadModelStore, teamId: string) => store.get<TeamDoc>(TEAMS, teamId);
