import type { Role } from '../domain/team.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `invitations` read model: a team's open invitations (neither accepted nor cancelled), written by the teams projection. */
export const INVITATIONS = 'invitations';

export interface InvitationDoc {
  [key: string]: unknown;
  /** The invitation id. */
  id: string;
  teamId: string;
  email: string;
  role: Role;
  /** SHA-256 of the code mailed to the address. */
  codeHash: string;
  /** The owner who invited; null: the operator. */
  invitedBy: string | null;
  invitedAt: string;
  expiresAt: string;
}

/** The open invitation whose code hashes to `codeHash`, if any. */
export async function findInvitationByCodeHash(store: ReadModelStore, codeHash: string): Promise<InvitationDoc | null> {
  const [invitation] = await store.find<InvitationDoc>(INVITATIONS, { codeHash });
  return invitation ?? null;
}

/** The team's open invitations (expired ones too: the owner sees they lapsed), oldest first. */
export async function listInvitationsOfTeam(store: ReadModelStore, teamId: string): Promise<InvitationDoc[]> {
  return (await store.find<InvitationDoc>(INVITATIONS, { teamId })).sort((a, b) => a.invitedAt.localeCompare(b.invitedAt) || a.id.localeCompare(b.id));
}
