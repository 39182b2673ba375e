import type { Ask } from '../domain/ingestion.ts';
import type { EntrySource } from '../domain/outreachEvents.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

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

export const getOpportunity = (store: ReadModelStore, opportunityId: string) => store.get<OpportunityDoc>(OPPORTUNITIES, opportunityId);
