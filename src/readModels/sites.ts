import type { Plan } from '../domain/site.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `sites` read model, written by the sites projection. */
export const SITES = 'sites';

export interface SiteDoc {
  [key: string]: unknown;
  id: string;
  teamId: string;
  domain: string;
  plan: Plan;
  licensed: boolean;
  sendingDomainVerified: boolean;
  aiCredits: number;
  dailyIngestionCap: number;
  dailyExtractionCap: number;
  forwardingToken: string;
  createdAt: string;
  /** Outbound webhooks on for the site; absent (on) until the first switch. */
  webhooksEnabled?: boolean;
}

export const getSite = (store: ReadModelStore, siteId: string) => store.get<SiteDoc>(SITES, siteId);

/** The team's sites, in the order asked for (unordered by default). */
export const listSitesOfTeam = (store: ReadModelStore, teamId: string, order: { sortBy?: 'createdAt' | 'id' } = {}) =>
  store.find<SiteDoc>(SITES, { teamId }, order);

/** The site whose forwarding mailbox is `forward+<token>@…`. */
export async function findSiteByForwardingToken(store: ReadModelStore, forwardingToken: string): Promise<SiteDoc | null> {
  const [site] = await store.find<SiteDoc>(SITES, { forwardingToken });
  return site ?? null;
}
