import type { AgentKey } from '../domain/agents.ts';
import type { OpportunityProposal } from '../domain/agentWork.ts';
import type { Ask } from '../domain/ingestion.ts';
import type { EntrySource } from '../domain/outreachEvents.ts';
import type { Filter, PageQuery, ReadModelStore, SortValue } from '../ports/readModelStore.ts';

/** The `opportunities` read model, written by the inbox projection: inbound pitches' asks and the agents' proposals. */
export const OPPORTUNITIES = 'opportunities';

/** Where an opportunity comes from: a pitch that reached the inbox, or a run of one of the six agents. */
export const OPPORTUNITY_KINDS = ['inbound_pitch', 'article_creation', 'ai_prompt', 'article_boost', 'interlinking', 'site_performance', 'outreach'] as const;
export type OpportunityKind = 'inbound_pitch' | AgentKey;

export interface OpportunityDoc extends Ask {
  [key: string]: unknown;
  id: string;
  siteId: string;
  teamId: string;
  kind: OpportunityKind;
  /** The pitch's conversation, or the one a cold pitch opened; null for the content agents' proposals. */
  conversationId: string | null;
  /** Inbound pitches only. */
  entrySource: EntrySource | null;
  /** True for the stub created when no ask was extracted. */
  stub: boolean;
  /** An agent's proposal as it made it; null for an inbound pitch. */
  details: OpportunityProposal | null;
  /** The agent run that proposed it. */
  runId: string | null;
  createdAt: string;
}

/** The list's indexes: the site's opportunities newest first, and one per equality filter. */
export const OPPORTUNITY_INDEXES = [
  ['siteId', 'createdAt'],
  ['siteId', 'entrySource', 'createdAt'],
  ['siteId', 'stub', 'createdAt'],
  ['siteId', 'kind', 'createdAt'],
] as const;

export const getOpportunity = (store: ReadModelStore, opportunityId: string) => store.get<OpportunityDoc>(OPPORTUNITIES, opportunityId);

export interface OpportunityFilters {
  kind?: OpportunityKind;
  entrySource?: EntrySource;
  stub?: boolean;
  createdAfter?: string;
  createdBefore?: string;
}

/** A page of the site's opportunities, newest first (createdAt, then id); one extra to tell whether more follow. */
export function listOpportunitiesPage(store: ReadModelStore, siteId: string, filters: OpportunityFilters, after: { value: SortValue; id: string } | null, limit: number) {
  const filter: Filter = { siteId };
  if (filters.kind !== undefined) filter.kind = filters.kind;
  if (filters.entrySource !== undefined) filter.entrySource = filters.entrySource;
  if (filters.stub !== undefined) filter.stub = filters.stub;
  const ranges: PageQuery['ranges'] = {};
  if (filters.createdAfter !== undefined || filters.createdBefore !== undefined) ranges.createdAt = { gt: filters.createdAfter, lt: filters.createdBefore };
  return store.page<OpportunityDoc>(OPPORTUNITIES, { filter, ranges, orderBy: 'createdAt', direction: 'desc', after, limit: limit + 1 });
}
