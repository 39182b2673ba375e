import type { Filter, PageQuery, ReadModelStore, SortValue } from '../ports/readModelStore.ts';

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

/** The list's index: the team's suppression list by address. */
export const SUPPRESSION_INDEXES = [['teamId', 'email']] as const;

/** `email` as the suppression list stores it (normalised). */
export const suppressionId = (teamId: string, email: string) => `${teamId}|${email}`;

export const getSuppression = (store: ReadModelStore, teamId: string, email: string) => store.get<SuppressionDoc>(SUPPRESSIONS, suppressionId(teamId, email));

/** A page of the team's suppression list by address; one extra to tell whether more follow. */
export const listSuppressionsPage = (store: ReadModelStore, teamId: string, after: { value: SortValue; id: string } | null, limit: number) =>
  store.page<SuppressionDoc>(SUPPRESSIONS, { filter: { teamId }, orderBy: 'email', direction: 'asc', after, limit: limit + 1 });
