import { type Projection, typesHandledBy } from './projection.ts';

/**
 * The projections authentication reads (keys, OAuth tokens and clients, teams and sites, dashboard
 * sessions): only these must be caught up before a credential is trusted, so a slow or failing
 * projection elsewhere (the inbox) never holds requests up. Each listed one can: while it is behind
 * the last credential event (a failing handler, a rebuild after a version bump) bearer requests and
 * dashboard pages wait, then get 503.
 */
export const CREDENTIAL_PROJECTIONS = ['apiKeys', 'oauth', 'teams', 'sites', 'dashboardSessions'] as const;

/** The event store's mark (see `EventStore.markPosition`) for the last event a credential projection reads. */
export const CREDENTIAL_MARK = 'credentials';

/**
 * Every event type the credential projections handle, or null when one of them does not list its
 * types (its `canHandle` is not built with `handles`): then no mark is kept and the head is used.
 */
export function credentialEventTypes(projections: readonly Projection[]): string[] | null {
  const chosen = CREDENTIAL_PROJECTIONS.map((name) => projections.find((p) => p.name === name));
  if (chosen.some((p) => p === undefined)) return null;
  return typesHandledBy(chosen as Projection[])?.sort() ?? null;
}
