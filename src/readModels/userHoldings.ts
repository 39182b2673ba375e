import type { ReadModelStore } from '../ports/readModelStore.ts';
import { listSessionsOfUser } from './dashboardSessions.ts';
import { OAUTH_GRANTS, type OAuthGrantDoc } from './oauthGrants.ts';

/** A user's dashboard sessions and the team's app connections (grants) they authorized, not revoked. */
export async function holdingsOfUser(store: ReadModelStore, user: { id: string; teamId: string }) {
  const [sessions, grants] = await Promise.all([
    listSessionsOfUser(store, user.id),
    store.find<OAuthGrantDoc>(OAUTH_GRANTS, { teamId: user.teamId, revoked: false }),
  ]);
  return { sessionIds: sessions.map((s) => s.sessionId), grantIds: grants.filter((g) => g.userId === user.id).map((g) => g.id) };
}
