import type { ReadModelStore } from '../ports/readModelStore.ts';
import { listSessionsOfUser } from './dashboardSessions.ts';
import { OAUTH_GRANTS, type OAuthGrantDoc } from './oauthGrants.ts';
import { listSitesOfTeam } from './sites.ts';
import { listSubscriptionsCreatedByClient } from './webhookSubscriptions.ts';

/**
 * A user's dashboard sessions not ended nor expired at `now`, the team's app connections (grants)
 * they authorized, not revoked, and the webhook subscriptions those apps would leave behind.
 */
export async function holdingsOfUser(store: ReadModelStore, user: { id: string; teamId: string }, now: Date) {
  const [sessions, grants] = await Promise.all([
    listSessionsOfUser(store, user.id),
    store.find<OAuthGrantDoc>(OAUTH_GRANTS, { teamId: user.teamId, revoked: false }),
  ]);
  const at = now.toISOString();
  const grantIds = grants.filter((g) => g.userId === user.id).map((g) => g.id);
  return {
    sessionIds: sessions.filter((s) => s.expiresAt > at).map((s) => s.sessionId),
    grantIds,
    subscriptions: await subscriptionsLeftBehind(store, user.teamId, grantIds),
  };
}

/**
 * The webhook subscriptions on the team's sites created by the apps of these grants that keep no other
 * grant in force in the team: once the grants are revoked, nobody in the team stands behind them.
 */
export async function subscriptionsLeftBehind(store: ReadModelStore, teamId: string, revokedGrantIds: readonly string[]): Promise<{ id: string; siteId: string }[]> {
  if (revokedGrantIds.length === 0) return [];
  const [grants, sites] = await Promise.all([store.find<OAuthGrantDoc>(OAUTH_GRANTS, { teamId, revoked: false }), listSitesOfTeam(store, teamId)]);
  const revoked = new Set(revokedGrantIds);
  const clients = new Set(grants.filter((g) => revoked.has(g.id)).map((g) => g.clientId));
  for (const g of grants) if (!revoked.has(g.id)) clients.delete(g.clientId);
  const teamSites = new Set(sites.map((s) => s.id));
  const left = await Promise.all([...clients].map((clientId) => listSubscriptionsCreatedByClient(store, clientId)));
  return left.flat().filter((s) => teamSites.has(s.site_id)).map((s) => ({ id: s.id, siteId: s.site_id }));
}
