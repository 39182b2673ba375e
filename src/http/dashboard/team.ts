import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { verifyPassword } from '../../commands/credentials.ts';
import { startDashboardSession } from '../../commands/dashboardSessions.ts';
import { TenancyError } from '../../commands/tenancy.ts';
import { cancelInvitation, inviteUser, supersedeInvitations } from '../../commands/teamInvitations.ts';
import { MailSendError } from '../../ports/mailer.ts';
import { listInvitationsOfTeam } from '../../readModels/teamInvitations.ts';
import { getTeam } from '../../readModels/teams.ts';
import { invitationMail } from './invitationMail.ts';
import { changeUserPassword, changeUserRole, removeUser } from '../../commands/teamUsers.ts';
import { DASHBOARD_SESSION_TTL_MS } from '../../domain/dashboardSession.ts';
import { ROLES, aRole } from '../../domain/team.ts';
import { appsIfMember, holdingsOfUser } from '../../readModels/userHoldings.ts';
import { openSessionsWith } from '../../readModels/dashboardSessions.ts';
import { getUser, listUsersOfTeam } from '../../readModels/users.ts';
import { actingFor } from '../actingFor.ts';
import { firstProblem, formText, parseForm } from '../web/forms.ts';
import { html } from '../web/html.ts';
import { type SignedIn, cookieOptions, sessionCookieName } from '../web/session.ts';
import { SignInThrottle } from '../web/signInThrottle.ts';
import { asSentence, noticeHtml, showSignedIn } from './show.ts';
import { latestPosition } from '../../lib/latestPosition.ts';

const roleForm = z.object({ role: formText.pipe(z.enum(ROLES, { error: 'Choose a role.' })) });
const addForm = z.object({ email: formText, role: formText.pipe(z.enum(ROLES, { error: 'Choose a role.' })) });
const passwordForm = z
  .object({ current_password: formText, new_password: formText.pipe(z.string().min(8, 'The new password must have at least 8 characters.')), confirm_password: formText })
  .refine((f) => f.new_password === f.confirm_password, { message: 'The two new passwords differ.' });

/** Invitation mails a team may send per hour. */
const INVITATIONS_PER_HOUR = 20;

/** Only owners invite people, change roles and remove people; everyone sees who is in the team. */
const canManagePeople = (s: SignedIn) => s.user.role === 'owner';

/**
 * The team's people (`/dashboard/team`): owners invite someone (the code goes to the address by mail),
 * change a role or remove someone, with the same rules and effects as the CLI's `team set-role` / `remove-user`; everyone changes
 * their own password, which ends their other sessions.
 */
export async function teamPages(app: FastifyInstance) {
  // A stolen cookie must not become a way to guess the password: a few wrong ones per session, then a pause.
  const passwordChecks = new SignInThrottle(app.counters, app.clock, 5);
  const invitationMails = new SignInThrottle(app.counters, app.clock, INVITATIONS_PER_HOUR, 60 * 60_000);

  const teamPage = async (reply: FastifyReply, s: SignedIn, notice?: { error?: string; info?: string }, status = 200) => {
    const [users, invitations] = await Promise.all([listUsersOfTeam(app.readModels, s.user.teamId), canManagePeople(s) ? listInvitationsOfTeam(app.readModels, s.user.teamId) : []]);
    const now = app.clock.now().getTime();
    const emailOf = new Map(users.map((u) => [u.id, u.email]));
    const invitationRows = invitations.map(
      (i) => html`<tr><td>${i.email}</td><td>${i.role}</td><td>${i.invitedBy === null ? 'the operator' : (emailOf.get(i.invitedBy) ?? i.invitedBy)}</td><td>${i.invitedAt}</td><td>${Date.parse(i.expiresAt) <= now ? 'expired' : i.expiresAt}</td>
        <td><form method="post" action="/dashboard/team/invitations/${i.id}/cancel"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit">Cancel invitation of ${i.email}</button></form></td></tr>`,
    );
    const rows = users.map(
      (u) => html`<tr><td>${u.email}${u.id === s.user.id ? ' (you)' : ''}</td><td>${u.role}</td><td>${u.passwordHash ? 'yes' : 'no'}</td><td>${u.createdAt}</td>
        <td>${
          canManagePeople(s)
            ? html`<form method="post" action="/dashboard/team/users/${u.id}/role"><input type="hidden" name="csrf" value="${s.csrf}">
                  <label>Role of ${u.email} <select name="role">${ROLES.map((r) => html`<option value="${r}" ${r === u.role ? html`selected` : ''}>${r}</option>`)}</select></label>
                  <button type="submit">Change role</button></form>
                <form method="post" action="/dashboard/team/users/${u.id}/remove"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit">Remove ${u.email}</button></form>`
            : ''
        }</td></tr>`,
    );
    return showSignedIn(
      reply,
      s,
      'Team',
      html`${noticeHtml(notice)}
        <h2>People</h2>
        <table><thead><tr><th>Email</th><th>Role</th><th>Dashboard sign-in</th><th>Added</th><th></th></tr></thead><tbody>${rows}</tbody></table>
        ${
          canManagePeople(s)
            ? html`<p>Removing someone ends their sessions and disconnects the apps they connected, with the webhook subscriptions those apps made; so does making an owner or admin a member (members cannot connect apps). The team keeps its API keys and the subscriptions made with them or here.</p>
              <h2>Invitations</h2>
              ${
                invitationRows.length > 0
                  ? html`<table><thead><tr><th>Email</th><th>Role</th><th>Invited by</th><th>Invited</th><th>Valid until</th><th></th></tr></thead><tbody>${invitationRows}</tbody></table>`
                  : html`<p>No open invitations.</p>`
              }
              <h2>Invite a person</h2>
              <form method="post" action="/dashboard/team/invitations"><input type="hidden" name="csrf" value="${s.csrf}">
                <label for="email">Email</label><input id="email" name="email" type="email" maxlength="320" required>
                <label for="role">Role</label><select id="role" name="role">${ROLES.map((r) => html`<option value="${r}" ${r === 'member' ? html`selected` : ''}>${r}</option>`)}</select>
                <button type="submit">Invite</button> <small>(a code is mailed to the address; the person joins with it and a password of their own, within 7 days)</small></form>`
            : html`<p>Only the team's owners invite people, change roles and remove people.</p>`
        }
        <h2>Your password</h2>
        <form method="post" action="/dashboard/password"><input type="hidden" name="csrf" value="${s.csrf}">
          <label for="current_password">Current password</label><input id="current_password" name="current_password" type="password" autocomplete="current-password" required>
          <label for="new_password">New password (at least 8 characters)</label><input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="8" required>
          <label for="confirm_password">New password again</label><input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" minlength="8" required>
          <button type="submit">Change password</button> <small>(every other browser where you are signed in is signed out)</small></form>`,
      status,
    );
  };

  /** The team's user named in the path, or the page with a 404 (another team's user is a missing one). */
  const teamUser = async (request: FastifyRequest<{ Params: { userId: string } }>, reply: FastifyReply, s: SignedIn) => {
    const user = await getUser(app.readModels, request.params.userId);
    if (user && user.teamId === s.user.teamId) return user;
    await teamPage(reply, s, { error: 'No such person in your team.' }, 404);
    return null;
  };

  /** A rule of the team's (the last owner) or of passwords, as a sentence on the page. */
  const refused = (reply: FastifyReply, s: SignedIn, error: unknown, status: number) => {
    if (error instanceof TenancyError) return teamPage(reply, s, { error: asSentence(error.message) }, status);
    throw error;
  };

  app.get('/dashboard/team', async function team(request: FastifyRequest<{ Querystring: { password?: string; joined?: string } }>, reply) {
    const { password, joined } = request.query;
    const info = password === 'changed' ? 'Your password was changed; your other sessions are signed out.' : joined ? 'Welcome: you joined the team.' : undefined;
    return teamPage(reply, request.dashboard!, info ? { info } : undefined);
  });

  app.post('/dashboard/team/invitations', async function invitePerson(request, reply) {
    const s = request.dashboard!;
    if (!canManagePeople(s)) return teamPage(reply, s, { error: `Only the team's owners invite people. You are ${aRole(s.user.role)}.` }, 403);
    const form = parseForm(addForm, request.body);
    if (!form.success) return teamPage(reply, s, { error: firstProblem(form.error) }, 400);
    // Each invitation is a mail from the service's domain to any address: a team sends a few, not a flood.
    const mailsKey = `invite|${s.user.teamId}`;
    const attemptedAt = app.clock.now().getTime();
    const wait = await invitationMails.attempt(mailsKey, attemptedAt);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      return teamPage(reply, s, { error: `Your team sent ${INVITATIONS_PER_HOUR} invitations in the last hour. Try again in ${Math.ceil(wait / 60)} minutes.` }, 429);
    }
    const acting = actingFor(app, request);
    let invited: Awaited<ReturnType<typeof inviteUser>>;
    try {
      invited = await inviteUser(acting, { teamId: s.user.teamId, email: form.data.email, role: form.data.role, byOwner: s.user.id });
    } catch (error) {
      // Refused before any mail: it does not count against the team's mails.
      await invitationMails.giveBack(mailsKey, attemptedAt);
      return refused(reply, s, error, 400);
    }
    const team = await getTeam(app.readModels, s.user.teamId);
    const mail = invitationMail({
      ...invited,
      role: form.data.role,
      teamName: team?.name ?? 'your team',
      baseUrl: app.config.PUBLIC_BASE_URL,
      mailDomain: app.config.MAIL_DOMAIN,
    });
    try {
      await app.mailer.send(mail);
    } catch (error) {
      // A code nobody received must not stay usable: the invitation is taken back (one sent before for the address stays).
      // Not the error itself: a relay's refusal names the address, and logs carry none.
      request.log.warn({ mailError: error instanceof Error ? error.name : 'unknown', permanent: error instanceof MailSendError ? error.permanent : undefined }, 'the invitation mail could not be sent');
      const r = await cancelInvitation(acting, { teamId: s.user.teamId, invitationId: invited.invitationId }).catch((err: unknown) => {
        // Cancelled meanwhile (its owner left, or it was replaced): withdrawn all the same.
        if (err instanceof TenancyError) return { position: null };
        throw err;
      });
      if (r.position !== null) await app.waitForWrite(r.position, 'answer');
      return teamPage(reply, s, { error: 'The invitation mail could not be sent, so the invitation was withdrawn. Try again later.' }, 503);
    }
    // Only now that this code reached the address: codes mailed before for it stop working.
    let superseded: { position: bigint | null };
    try {
      superseded = await supersedeInvitations(acting, { teamId: s.user.teamId, invitationId: invited.invitationId });
    } catch (error) {
      return refused(reply, s, error, 409);
    }
    const position = latestPosition(superseded.position, invited.position);
    if (position !== null) await app.waitForWrite(position, 'answer');
    return teamPage(reply, s, { info: `An invitation was mailed to ${invited.email}, as ${form.data.role}: they join with the code in it and a password of their own, within 7 days.` }, 201);
  });

  app.post('/dashboard/team/invitations/:invitationId/cancel', async function cancelInvitationOf(request: FastifyRequest<{ Params: { invitationId: string } }>, reply) {
    const s = request.dashboard!;
    if (!canManagePeople(s)) return teamPage(reply, s, { error: `Only the team's owners cancel invitations. You are ${aRole(s.user.role)}.` }, 403);
    try {
      const r = await cancelInvitation(actingFor(app, request), { teamId: s.user.teamId, invitationId: request.params.invitationId, byOwner: s.user.id });
      if (r.position !== null) await app.waitForWrite(r.position);
    } catch (error) {
      return refused(reply, s, error, 404);
    }
    return reply.redirect('/dashboard/team', 303);
  });

  app.post('/dashboard/team/users/:userId/role', async function changeRole(request: FastifyRequest<{ Params: { userId: string } }>, reply) {
    const s = request.dashboard!;
    if (!canManagePeople(s)) return teamPage(reply, s, { error: `Only the team's owners change roles. You are ${aRole(s.user.role)}.` }, 403);
    const user = await teamUser(request, reply, s);
    if (!user) return reply;
    const form = parseForm(roleForm, request.body);
    if (!form.success) return teamPage(reply, s, { error: firstProblem(form.error) }, 400);
    try {
      const holdings = await appsIfMember(app, user, form.data.role, app.clock.now());
      const r = await changeUserRole(actingFor(app, request), { teamId: s.user.teamId, userId: user.id, role: form.data.role, byOwner: s.user.id }, holdings);
      if (r.position !== null) await app.waitForWrite(r.position);
    } catch (error) {
      return refused(reply, s, error, 409);
    }
    return reply.redirect('/dashboard/team', 303);
  });

  app.post('/dashboard/team/users/:userId/remove', async function removePerson(request: FastifyRequest<{ Params: { userId: string } }>, reply) {
    const s = request.dashboard!;
    if (!canManagePeople(s)) return teamPage(reply, s, { error: `Only the team's owners remove people. You are ${aRole(s.user.role)}.` }, 403);
    const user = await teamUser(request, reply, s);
    if (!user) return reply;
    try {
      const r = await removeUser(actingFor(app, request), { teamId: s.user.teamId, userId: user.id, byOwner: s.user.id }, await holdingsOfUser(app, user, app.clock.now()));
      if (r.position !== null) await app.waitForWrite(r.position);
    } catch (error) {
      return refused(reply, s, error, 409);
    }
    // An owner who removed themselves is signed out with the rest of their sessions.
    return reply.redirect(user.id === s.user.id ? '/dashboard/sign-in' : '/dashboard/team', 303);
  });

  app.post('/dashboard/password', async function changePassword(request, reply) {
    const s = request.dashboard!;
    const form = parseForm(passwordForm, request.body);
    if (!form.success) return teamPage(reply, s, { error: firstProblem(form.error) }, 400);
    // Per session: a thief's guesses on a stolen cookie do not lock the person out of changing it from their own.
    const pair = `password-change|${s.user.id}|${s.sessionId}`;
    const attemptedAt = app.clock.now().getTime();
    const wait = await passwordChecks.attempt(pair, attemptedAt);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      return teamPage(reply, s, { error: `Too many wrong passwords. Try again in ${Math.ceil(wait / 60)} minutes. If this was not you, use Sign out everywhere on the dashboard's home.` }, 429);
    }
    const ok = s.user.passwordHash !== null && (await verifyPassword(form.data.current_password, s.user.passwordHash).catch(() => false));
    if (!ok) return teamPage(reply, s, { error: 'The current password is incorrect.' }, 401);
    await passwordChecks.succeed(pair);
    const acting = actingFor(app, request);
    let credential: string | null;
    try {
      const sessionIds = await openSessionsWith(app.readModels, { sessionId: s.sessionId, userId: s.user.id }, app.clock.now());
      ({ credential } = await changeUserPassword(acting, { teamId: s.user.teamId, userId: s.user.id, password: form.data.new_password, sessionEpoch: s.user.sessionEpoch }, { sessionIds }));
    } catch (error) {
      return refused(reply, s, error, 400);
    }
    // Every session ended, this one too: this browser goes on in a new one, signed in with the new password.
    const session = await startDashboardSession(acting, { userId: s.user.id, teamId: s.user.teamId, credential: credential! });
    await app.waitForWrite(session.position);
    reply.setCookie(sessionCookieName(app), session.token, cookieOptions(app, DASHBOARD_SESSION_TTL_MS / 1000));
    return reply.redirect('/dashboard/team?password=changed', 303);
  });
}
