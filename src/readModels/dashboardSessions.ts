import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `dashboardSessions` read model, written by the dashboardSessions projection. */
export const DASHBOARD_SESSIONS = 'dashboardSessions';

export interface DashboardSessionDoc {
  [key: string]: unknown;
  /** SHA-256 of the cookie's token. */
  id: string;
  sessionId: string;
  userId: string;
  teamId: string;
  /** The passwordStamp the session was signed in with; null or absent in sessions started before it was recorded (no longer accepted). */
  credential?: string | null;
  expiresAt: string;
  ended: boolean;
}

/** The session whose cookie token hashes to `tokenHash`. */
export const getDashboardSession = (store: ReadModelStore, tokenHash: string) => store.get<DashboardSessionDoc>(DASHBOARD_SESSIONS, tokenHash);

/** The ids of the user's sessions neither ended nor expired at `now`. */
export async function openSessionsOfUser(store: ReadModelStore, userId: string, now: Date): Promise<string[]> {
  const at = now.toISOString();
  return (await store.find<DashboardSessionDoc>(DASHBOARD_SESSIONS, { userId })).filter((s) => s.expiresAt > at).map((s) => s.sessionId);
}

/** The user's open sessions and `current`, the one asking: the read model may not list a session started a moment ago. */
export const openSessionsWith = async (store: ReadModelStore, current: { sessionId: string; userId: string }, now: Date): Promise<string[]> => [
  ...new Set([current.sessionId, ...(await openSessionsOfUser(store, current.userId, now))]),
];
