import type { Role } from '../domain/team.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `users` read model, written by the teams projection. */
export const USERS = 'users';

export interface UserDoc {
  [key: string]: unknown;
  id: string;
  teamId: string;
  email: string;
  role: Role;
  passwordHash: string | null;
  /** How many times every session of the user was ended at once (Sign out everywhere); absent: never. */
  sessionEpoch?: number;
  createdAt: string;
}

export const getUser = (store: ReadModelStore, userId: string) => store.get<UserDoc>(USERS, userId);

/** The user with this (normalised) email, if any: an address belongs to one user across the service. */
export async function findUserByEmail(store: ReadModelStore, email: string): Promise<UserDoc | null> {
  const [user] = await store.find<UserDoc>(USERS, { email });
  return user ?? null;
}

/** The team's users, oldest first. */
export async function listUsersOfTeam(store: ReadModelStore, teamId: string): Promise<UserDoc[]> {
  const users = await store.find<UserDoc>(USERS, { teamId });
  return users.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}
