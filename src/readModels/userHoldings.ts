import { subscriptionStream } from '../domain/webhookSubscription.ts';
import type { EventStore } from '../ports/eventStore.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';
import { openSessionsOfUser } from './dashboardSessions.ts';
import { type Role, canAuthorizeApps, standsBehindApps } from '../domain/team.ts';
import { OAUTH_GRANTS, type OAuthGrantDoc, listActiveGrantsOfTeam, listGrantsOfClient } from './oauthGrants.ts';
import { OAUTH_TOKENS, type OAuthTokenDoc } from './oauthTokens.ts';
import { listSitesOfTeam } from './sites.ts';
import { USERS, type UserDoc } from './users.ts';
import { listSubscriptionsCreatedByClient } from './webhookSubscriptions.ts';

type Stores = { readModels: ReadModelStore; events: Pick<EventStore, 'readStream'> };

/**
 * What a user holds beyond the team's stream: their dashboard sessions not ended nor expired at
 * `now`, every app connection (grant) they gave in the team (revoked ones too: the sweep revokes those
 * still in force), and the webhook subscriptions made with those grants' tokens.
 */
export async function holdingsOfUser(stores: Stores, user: { id: string; teamId: string }, now: Date) {
  const [sessionIds, apps] = await Promise.all([openSessionsOfUser(stores.readModels, user.id, now), appsOfUser(stores, user, now)]);
  return { sessionIds, ...apps };
}

/** What `changeUserRole` disconnects: the user's apps when the new role cannot authorize apps (member), else nothing. */
export const appsIfMember = (stores: Stores, user: { id: string; teamId: string }, role: Role, now: Date) =>
  !canAuthorizeApps(role) ? appsOfUser(stores, user, now) : Promise.resolve({ grantIds: [], subscriptions: [] });

/** Every grant the user gave in the team (revoked ones too: the sweep revokes those still in force) and the subscriptions made with them. */
export async function appsOfUser(stores: Stores, user: { id: string; teamId: string }, now: Date) {
  const grantIds = await grantsGivenBy(stores.readModels, user);
  return { grantIds, subscriptions: await subscriptionsOfGrants(stores, user.teamId, grantIds, now) };
}

/** What a deleted client leaves behind, as the read models list it now: its grants (revoked ones too) and the subscriptions it created. */
export async function holdingsOfClient(readModels: ReadModelStore, clientId: string) {
  const [grants, subscriptions] = await Promise.all([listGrantsOfClient(readModels, clientId), listSubscriptionsCreatedByClient(readModels, clientId)]);
  return { grantIds: grants.map((g) => g.id), subscriptions: subscriptions.map((s) => ({ id: s.id, siteId: s.site_id })) };
}

/** Every grant the user gave in the team, revoked ones too. */
export async function grantsGivenBy(readModels: ReadModelStore, user: { id: string; teamId: string }): Promise<string[]> {
  const grants = await readModels.find<OAuthGrantDoc>(OAUTH_GRANTS, { teamId: user.teamId });
  return grants.filter((g) => g.userId === user.id).map((g) => g.id);
}

/**
 * The webhook subscriptions on the team's sites made with a token of these grants. A subscription's
 * `SubscriptionCreated` names the access token that made it (its `actor`), and the token its grant.
 * One whose token is not known any more goes with its app (its OAuth client) when no other grant of
 * the team, in use and given by a person still an owner or admin, stands behind that app.
 */
export async function subscriptionsOfGrants(stores: Stores, teamId: string, grantIds: readonly string[], now: Date): Promise<{ id: string; siteId: string }[]> {
  if (grantIds.length === 0) return [];
  const { readModels } = stores;
  const [grants, sites] = await Promise.all([Promise.all(grantIds.map((id) => readModels.get<OAuthGrantDoc>(OAUTH_GRANTS, id))), listSitesOfTeam(readModels, teamId)]);
  const ours = new Set(grantIds);
  const teamSites = new Set(sites.map((s) => s.id));
  const clients = new Set(grants.flatMap((g) => (g && g.teamId === teamId ? [g.clientId] : [])));
  const candidates = (await Promise.all([...clients].map((clientId) => listSubscriptionsCreatedByClient(readModels, clientId)))).flat().filter((s) => teamSites.has(s.site_id));
  const attributed = await Promise.all(candidates.map(async (s) => ({ s, grantId: await grantOfSubscription(stores, s.id) })));
  // Who else stands behind each app: asked only when some subscription's token is not known.
  const stillConnected = attributed.some(({ grantId }) => grantId === null) ? await clientsStillConnected(readModels, teamId, ours, now) : new Set<string>();
  return attributed
    .filter(({ s, grantId }) => (grantId !== null ? ours.has(grantId) : !stillConnected.has(s.created_by_oauth_client_id!)))
    .map(({ s }) => ({ id: s.id, siteId: s.site_id }));
}

/** The apps (client ids) a grant of the team other than `except`, in use and given by an owner or admin, stands behind. */
async function clientsStillConnected(readModels: ReadModelStore, teamId: string, except: ReadonlySet<string>, now: Date): Promise<Set<string>> {
  const others = (await listActiveGrantsOfTeam(readModels, teamId, now)).filter((g) => !except.has(g.id));
  const standing = await Promise.all(others.map(async (g) => ({ g, by: await readModels.get<UserDoc>(USERS, g.userId) })));
  return new Set(standing.filter(({ by }) => standsBehindApps(by, teamId)).map(({ g }) => g.clientId));
}

/** The grant whose access token created the subscription, or null when that is not known. */
async function grantOfSubscription(stores: Stores, subscriptionId: string): Promise<string | null> {
  const [created] = await stores.events.readStream(subscriptionStream(subscriptionId));
  const metadata = (created?.metadata ?? {}) as { actor?: unknown; actorKind?: unknown };
  if (metadata.actorKind !== 'oauth_access_token' || typeof metadata.actor !== 'string') return null;
  const [token] = await stores.readModels.find<OAuthTokenDoc>(OAUTH_TOKENS, { tokenId: metadata.actor });
  return token?.grantId ?? null;
}
