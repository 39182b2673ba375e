import { randomBytes } from 'node:crypto';
import { normaliseEmail } from '../domain/email.ts';
import { INVITATION_TTL_MS, type Role, type TeamInvitation, TeamRuleError, openInvitation, teamDecider, teamStream } from '../domain/team.ts';
import { aggregateStream } from './aggregateStream.ts';
import { type CommandContext, actingAs } from './context.ts';
import { hashPassword, passwordStamp, sha256Hex } from './credentials.ts';
import { EmailInUseError, TenancyError, checkPassword, checkUserInput, claimEmail, decideOnTeam, releasingOnFailure, requireTeam } from './tenancy.ts';

/** `svc_inv_` and 32 random bytes: short enough for one line of a mail; only its hash is recorded. */
const INVITATION_CODE = /^svc_inv_[A-Za-z0-9_-]{43}$/;

/** Where an invitation's code leads (the invitations read model, found by the code's hash). */
export type InvitationLookup = (codeHash: string) => Promise<{ teamId: string; invitationId: string } | null>;

const NOT_VALID = 'this invitation code is not valid: it is wrong, was used or cancelled, or expired';

/**
 * An owner invites someone by address: nothing is claimed yet (the address may be somebody else's, or
 * sign in elsewhere), so no owner can take an address that was never theirs to give, nor learn
 * whether it signs in somewhere. The caller mails the code to the address (the owner never sees it),
 * so only whoever reads that mailbox can join.
 */
export async function inviteUser(ctx: CommandContext, input: { teamId: string; email: string; role: Role; byOwner?: string }) {
  const email = normaliseEmail(input.email);
  checkUserInput(email, undefined);
  await requireTeam(ctx, input.teamId);
  const invitationId = ctx.newId();
  const code = `svc_inv_${randomBytes(32).toString('base64url')}`;
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS).toISOString();
  const result = await decideOnTeam(ctx, input.teamId, {
    type: 'InviteUser',
    data: { teamId: input.teamId, invitationId, email, role: input.role, codeHash: sha256Hex(code), byOwner: input.byOwner, expiresAt, now: now.toISOString() },
  });
  return { invitationId, code, email, expiresAt, position: result.position };
}

/** After its mail went out: the other open invitations of the same address are cancelled (their codes stop working). */
export async function supersedeInvitations(ctx: CommandContext, input: { teamId: string; invitationId: string }) {
  const result = await decideOnTeam(ctx, input.teamId, { type: 'SupersedeInvitations', data: { ...input, now: ctx.clock.now().toISOString() } });
  return { position: result.position };
}

export async function cancelInvitation(ctx: CommandContext, input: { teamId: string; invitationId: string; byOwner?: string }) {
  const result = await decideOnTeam(ctx, input.teamId, { type: 'CancelInvitation', data: { ...input, now: ctx.clock.now().toISOString() } });
  return { position: result.position };
}

/**
 * The invited person joins with the code and a password of their own: the address is claimed now, by
 * the person it was sent to. The code is checked before anything else (no password is hashed, nothing
 * is claimed for a wrong one). `credential` is the password's stamp, for the session that follows.
 */
export async function acceptInvitation(ctx: CommandContext, input: { code: string; password: string }, lookup: InvitationLookup) {
  const code = input.code.trim();
  if (!INVITATION_CODE.test(code)) throw new TenancyError(NOT_VALID);
  if (!input.password) throw new TenancyError('choose a password');
  checkPassword(input.password);
  const codeHash = sha256Hex(code);
  const found = await lookup(codeHash);
  if (!found) throw new TenancyError(NOT_VALID);
  const { teamId, invitationId } = found;
  // The team's stream decides (the read model only found it): still open, this code, not expired.
  const invitation = await openNow(ctx, teamId, invitationId, codeHash);
  if (!invitation) throw new TenancyError(NOT_VALID);
  const { email } = invitation;
  const userId = ctx.newId();
  // The person joining acts (their address claimed, their acceptance, their addition), as a signed-in user would.
  ctx = actingAs(ctx, { kind: 'dashboard_user', id: userId });
  // Hashed before the claim: nothing between the claim and its release on failure may throw unguarded.
  const passwordHash = await hashPassword(input.password);
  try {
    await claimEmail(ctx, { email, userId, teamId });
  } catch (error) {
    // Two joins with one code: the one that lost the race hears that the code is used, not that the address is taken.
    if (error instanceof EmailInUseError && !(await openNow(ctx, teamId, invitationId, codeHash))) throw new TenancyError(NOT_VALID);
    throw error;
  }
  const result = await releasingOnFailure(ctx, { email, userId }, () =>
    decideOnTeam(ctx, teamId, { type: 'AcceptInvitation', data: { teamId, invitationId, codeHash, userId, passwordHash, now: ctx.clock.now().toISOString() } }),
  );
  return { userId, teamId, email, position: result.position, credential: passwordStamp(passwordHash)! };
}


/** The invitation if this code opens it now, as the team's stream stands (not a read model); null otherwise. */
async function openNow(ctx: CommandContext, teamId: string, invitationId: string, codeHash: string): Promise<TeamInvitation | null> {
  const { state } = await aggregateStream(ctx.events, teamStream(teamId), teamDecider);
  try {
    return openInvitation(state, invitationId, codeHash, ctx.clock.now().toISOString());
  } catch (error) {
    if (error instanceof TeamRuleError) return null;
    throw error;
  }
}
