import type { Ask } from '../domain/ingestion.ts';
import type { EntrySource } from '../domain/outreachEvents.ts';
import type { Filter, PageQuery, ReadModelStore, SortValue } from '../ports/readModelStore.ts';

/** The `opportunities` read model, written by the inbox projection. */
export const OPPORTUNITIES = 'opportunities';

export interface OpportunityDoc extends Ask {
  [key: string]: unknown;
  id: string;
  siteId: string;
  teamId: string;
  conversationId: string;
  entrySource: EntrySource;
  /** True for the stub created when no ask was extracted. */
  stub: boolean;
  createdAt: string;
}

/** The list's indexes: the site's opportunities newest first, and one per equality filter. */
export const OPPORTUNITY_INDEXES = [
  ['siteId', 'createdAt'],
  ['siteId', 'entrySource', 'createdAt'],
  ['siteId', 'stub', 'createdAt'],
] as const;

export const getOpportunity = (store: ReadModelStore, opportunityId: string) => store.get<OpportunityDoc>(OPPORTUNITIES, opportunityId);

export interface OpportunityFilters {
  entrySource?: EntrySource;
  stub?: boolean;
  createdAfter?: string;
  createdBefore?: string;
}

/** A page of the site's opportunities, newest first (createdAt, then id); one extra to tell whether more follow. */
export function listOpportunitiesPage(store: ReadModelStore, siteId: string, filters: OpportunityFilters, after: { value: SortValue; id: string } | null, limit: number) {
  const filter: Filter = { siteId };
  if (filters.entrySource !== undefined) filter.entrySource = filters.entrySource;
  if (filters.stub !== undefined) filter.stub = filters.stub;
  const ranges: PageQuery['ranges'] = {};
  if (filters.createdAfter !== undefined || filters.createdBefore !== undefined) ranges.createdAt = { gt: filters.createdAfter, lt: filters.createdBefore };
  return store.page<OpportunityDoc>(OPPORTUNITIES, { filter, ranges, orderBy: 'createdAt', direction: 'desc', after, limit: limit + 1 });
}
