import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `suppressions` read model (the team-wide suppression list), written by the suppressions projection. */
export const SUPPRESSIONS = 'suppressions';

export interface SuppressionDoc {
  [key: string]: unknown;
  id: string;
  teamId: string;
  email: string;
  reason: string;
  source: string;
  suppressedAt: string;
}

/** `email` as the suppression list stores it (normalised). */
export const suppressionId = (teamId: string, email: string) => `${teamId}|${email}`;

export const getSuppression = (store: ReadModelStore, teamId: string, email: string) => store.get<SuppressionDoc>(SUPPRESSIONS, suppressionId(teamId, email));
