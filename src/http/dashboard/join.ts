import { inRequest } from '../../commands/context.ts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { endDashboardSession, startDashboardSession } from '../../commands/dashboardSessions.ts';
import { acceptInvitation } from '../../commands/teamInvitations.ts';
import { EmailInUseError, TenancyError } from '../../commands/tenancy.ts';
import { DASHBOARD_SESSION_TTL_MS } from '../../domain/dashboardSession.ts';
import { csrfForm, firstProblem, formText, parseForm, readForm } from '../web/forms.ts';
import { html, page, sendPage } from '../web/html.ts';
import { clientGroup } from '../../lib/clientGroup.ts';
import { findInvitationByCodeHash } from '../../readModels/teamInvitations.ts';
import { SignInThrottle } from '../web/signInThrottle.ts';
import { asSentence, noticeHtml } from './show.ts';
import { cookieOptions, csrfOk, issueSignInCsrf, loadSession, sessionCookieName, signInCsrfCookieName } from '../web/session.ts';

const joinForm = z
  .object({
    code: formText,
    new_password: formText.pipe(z.string().min(8, 'The password must have at least 8 characters.')),
    confirm_password: formText,
  })
  .refine((f) => f.new_password === f.confirm_password, { message: 'The two passwords differ.' });

function joinPage(reply: FastifyReply, app: FastifyInstance, status: number, error?: string) {
  const csrf = issueSignInCsrf(app, reply);
  return sendPage(
    reply,
    status,
    page(
      'Join your team',
      html`${noticeHtml({ error })}
        <p>Enter the invitation code from the mail you received and choose your password; you sign in with your address and this password from then on.</p>
        <form method="post" action="/dashboard/join">
          <input type="hidden" name="csrf" value="${csrf}">
          <label for="code">Invitation code</label><input id="code" name="code" autocomplete="off" spellcheck="false" required>
          <label for="new_password">Password (at least 8 characters)</label><input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="8" required>
          <label for="confirm_password">Password again</label><input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" minlength="8" required>
          <button type="submit">Join</button>
        </form>`,
    ),
  );
}

/**
 * `/dashboard/join`: an invited person joins the team with the code mailed to them and a password of
 * their own, and is signed in (20 refused joins per 15 minutes per client address). The code goes in
 * a form, never in a URL (where logs and Referer headers would keep it).
 */
export async function joinRoutes(app: FastifyInstance) {
  // Codes cannot be guessed; this keeps a client from trying them without end (a refused join counts).
  const throttle = new SignInThrottle(app.counters, app.clock, 20);
  app.get('/dashboard/join', async function joinTeamPage(_request, reply) {
    return joinPage(reply, app, 200);
  });

  app.post('/dashboard/join', async function joinTeam(request, reply) {
    const cookieCsrf = request.cookies[signInCsrfCookieName(app)] ?? '';
    if (!cookieCsrf || !csrfOk(cookieCsrf, readForm(csrfForm, request.body).csrf)) return joinPage(reply, app, 403, 'Your form expired. Please try again.');
    const form = parseForm(joinForm, request.body);
    if (!form.success) return joinPage(reply, app, 400, firstProblem(form.error));
    // Before the limit counts the attempt (this may answer 503): an invitation made through another API node is in this node's read model once it has caught up.
    await app.credentialsInForce();
    const pair = `join|${clientGroup(request.ip)}`;
    const attemptedAt = app.clock.now().getTime();
    const wait = await throttle.attempt(pair, attemptedAt);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      return joinPage(reply, app, 429, `Too many wrong invitation codes. Try again in ${Math.ceil(wait / 60)} minutes.`);
    }
    let joined: Awaited<ReturnType<typeof acceptInvitation>>;
    try {
      joined = await acceptInvitation(inRequest(app, request.id), { code: form.data.code, password: form.data.new_password }, async (codeHash) => {
        const found = await findInvitationByCodeHash(app.readModels, codeHash);
        return found ? { teamId: found.teamId, invitationId: found.id } : null;
      });
      // Only this attempt is given back: one join does not wipe the client's failures before it.
      await throttle.giveBack(pair, attemptedAt);
    } catch (error) {
      if (error instanceof EmailInUseError) {
        return joinPage(reply, app, 409, 'Your address signs in to a team here already. Sign in with it, or ask the owner to invite another address.');
      }
      if (error instanceof TenancyError) return joinPage(reply, app, 400, asSentence(error.message));
      throw error;
    }
    // As at sign-in: a session this browser still held ends, and the new person's begins.
    // The person has joined whatever happens here: a lagging read model must not turn that into an error page.
    const previous = await loadSession(app, request).catch(() => null);
    const ctx = inRequest(app, request.id);
    if (previous) await endDashboardSession(ctx, { sessionId: previous.sessionId });
    const session = await startDashboardSession(ctx, { userId: joined.userId, teamId: joined.teamId, credential: joined.credential });
    await app.waitForWrite(session.position);
    reply.setCookie(sessionCookieName(app), session.token, cookieOptions(app, DASHBOARD_SESSION_TTL_MS / 1000));
    reply.clearCookie(signInCsrfCookieName(app), cookieOptions(app));
    return reply.redirect('/dashboard/team?joined=1', 303);
  });
}
