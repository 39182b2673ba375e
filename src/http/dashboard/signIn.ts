import { inRequest } from '../../commands/context.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { sessionStampOf, sha256Hex, verifyPassword } from '../../commands/credentials.ts';
import { endDashboardSession, startDashboardSession } from '../../commands/dashboardSessions.ts';
import { actingAs } from '../../commands/context.ts';
import { signOutEverywhere } from '../../commands/teamUsers.ts';
import { getDashboardSession, openSessionsWith } from '../../readModels/dashboardSessions.ts';
import { DASHBOARD_SESSION_TTL_MS } from '../../domain/dashboardSession.ts';
import { normaliseEmail } from '../../domain/email.ts';
import { findUserByEmail } from '../../readModels/users.ts';
import { csrfForm, formText, readForm } from '../web/forms.ts';
import { html, page, sendPage } from '../web/html.ts';
import {
  type SessionPorts,
  cookieOptions,
  csrfFor,
  csrfOk,
  issueSignInCsrf,
  loadSession,
  safeReturnTo,
  sessionCookieName,
  sessionTokenOf,
  signInCsrfCookieName,
} from '../web/session.ts';
import { clientGroup } from '../../lib/clientGroup.ts';
import { SignInThrottle } from '../web/signInThrottle.ts';
import { KnownPlaces } from '../web/knownPlaces.ts';
import { signInLinks } from './signInLink.ts';
import { BUSY, PasswordCheckGate } from '../web/passwordCheckGate.ts';
import { noticeHtml } from './show.ts';

/** Compared against when the email is unknown, so a miss costs the same scrypt work as a hit. */
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

const signInFields = z.object({
  return_to: formText.transform(safeReturnTo),
  email: formText.transform(normaliseEmail),
  password: formText,
  csrf: formText,
});

function signInForm(reply: FastifyReply, services: Pick<SessionPorts, 'config'>, status: number, returnTo: string, error?: string, email = '', info?: string) {
  const csrf = issueSignInCsrf(services, reply);
  return sendPage(
    reply,
    status,
    page(
      'Sign in',
      html`${noticeHtml({ error, info })}
        <form method="post" action="/dashboard/sign-in">
          <input type="hidden" name="csrf" value="${csrf}">
          <input type="hidden" name="return_to" value="${returnTo}">
          <label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${email}">
          <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
          <button type="submit">Sign in</button>
        </form>`,
    ),
  );
}

export async function signInRoutes(app: FastifyInstance) {
  const throttle = new SignInThrottle(app.counters, app.clock);
  // Per client address whatever the email: a guess at a new address each time is still a password
  // check (scrypt, on the thread pool DNS lookups share), so one client must not make them without end.
  const addressThrottle = new SignInThrottle(app.counters, app.clock, app.config.SIGN_IN_FAILURES_PER_ADDRESS);
  // Per account whatever the address: guesses spread over many addresses (a botnet) still reach a limit.
  // Past it the account's own person is refused too from a new place, for at most the window.
  const accountThrottle = new SignInThrottle(app.counters, app.clock, app.config.SIGN_IN_FAILURES_PER_ACCOUNT);
  // Except from where the account signed in before: failures anyone sends from elsewhere must not
  // lock the account's own person out of their usual network. From a new place, a mailed link helps.
  const known = new KnownPlaces(app.counters, app.clock);
  const links = signInLinks(app);
  // Two checks at once leave half of libuv's pool to the rest of the process, whatever the number of addresses.
  const checks = new PasswordCheckGate(2, app.config.SIGN_IN_MAX_QUEUED_CHECKS);

  app.get('/dashboard/sign-in', async function signInPage(request: FastifyRequest<{ Querystring: { return_to?: string; place?: string } }>, reply) {
    const returnTo = safeReturnTo(request.query.return_to);
    if (await loadSession(app, request)) return reply.redirect(returnTo, 303);
    const info = request.query.place === 'known' ? 'You can sign in from here now, with your password.' : undefined;
    return signInForm(reply, app, 200, returnTo, undefined, '', info);
  });

  app.post('/dashboard/sign-in', async function signIn(request, reply) {
    const { return_to: returnTo, email, password, csrf } = readForm(signInFields, request.body);
    const cookieCsrf = request.cookies[signInCsrfCookieName(app)] ?? '';
    if (!cookieCsrf || !csrfOk(cookieCsrf, csrf)) {
      return signInForm(reply, app, 403, returnTo, 'Your sign-in form expired. Please try again.', email);
    }
    // A user added a moment ago by the CLI or another API node signs in at once (before any limit counts the attempt: this may answer 503).
    await app.credentialsInForce();
    const client = clientGroup(request.ip);
    const key = `${email}|${client}`;
    const addressKey = `address|${client}`;
    const accountKey = `account|${email}`;
    const attemptedAt = app.clock.now().getTime();
    let wait = await addressThrottle.attempt(addressKey, attemptedAt);
    // Asked only when the address is admitted: a refused attempt costs no more counter-store round trips.
    const accountCounts = wait === 0 && !(await known.has(email, client));
    if (wait === 0 && accountCounts) {
      wait = await accountThrottle.attempt(accountKey, attemptedAt);
      if (wait > 0) {
        // Refused for this account: no password is checked, so it is no failure of the address either.
        await addressThrottle.giveBack(addressKey, attemptedAt);
        links.offer(email).catch((error: unknown) => request.log.warn({ err: error }, 'offering a sign-in link failed'));
        reply.header('retry-after', String(wait));
        return signInForm(
          reply,
          app,
          429,
          returnTo,
          `Too many failed sign-ins to this account from other places: new places are refused for ${Math.ceil(wait / 60)} minutes. If the address has an account, it has been mailed a link (at most one an hour) that lets you sign in from here at once.`,
          email,
        );
      }
    }
    if (wait === 0) {
      wait = await throttle.attempt(key, attemptedAt);
      // Refused for this email and address: no failure of the address or the account either.
      if (wait > 0) await Promise.all([addressThrottle.giveBack(addressKey, attemptedAt), accountCounts && accountThrottle.giveBack(accountKey, attemptedAt)]);
    }
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      return signInForm(reply, app, 429, returnTo, `Too many failed sign-ins. Try again in ${Math.ceil(wait / 60)} minutes.`, email);
    }
    const user = email ? await findUserByEmail(app.readModels, email) : null;
    const ok = await checks.run(() => verifyPassword(password, user?.passwordHash ?? DUMMY_HASH).catch(() => false));
    if (ok === BUSY) {
      // No password was checked: neither limit counts it.
      await Promise.all([throttle.giveBack(key, attemptedAt), addressThrottle.giveBack(addressKey, attemptedAt), accountCounts && accountThrottle.giveBack(accountKey, attemptedAt)]);
      reply.header('retry-after', '1');
      return signInForm(reply, app, 429, returnTo, 'Too many sign-ins at this moment. Please try again in a few seconds.', email);
    }
    if (!user || !user.passwordHash || !ok) {
      // Already counted by `attempt`.
      return signInForm(reply, app, 401, returnTo, 'The email or password is incorrect.', email);
    }
    await throttle.succeed(key);
    await Promise.all([
      addressThrottle.giveBack(addressKey, attemptedAt),
      accountCounts && accountThrottle.giveBack(accountKey, attemptedAt),
      known.remember(email, client),
    ]);
    // A session this browser still held (another account's, or its own) ends: one browser, one session.
    const ctx = inRequest(app, request.id);
    const previous = await loadSession(app, request);
    if (previous) await endDashboardSession(ctx, { sessionId: previous.sessionId });
    const session = await startDashboardSession(ctx, { userId: user.id, teamId: user.teamId, credential: sessionStampOf(user)! });
    await app.waitForWrite(session.position);
    reply.setCookie(sessionCookieName(app), session.token, cookieOptions(app, DASHBOARD_SESSION_TTL_MS / 1000));
    reply.clearCookie(signInCsrfCookieName(app), cookieOptions(app));
    return reply.redirect(returnTo, 303);
  });

  // Works whatever else happened meanwhile (a password change, a removal) and while the read models
  // lag behind the log: the session the cookie names ends, and the cookie goes. The append is
  // durable, and nothing this browser asks next waits for the read models to take it in.
  app.post('/dashboard/sign-out', async function signOut(request, reply) {
    const token = sessionTokenOf(app, request);
    if (token && csrfOk(csrfFor(token), readForm(csrfForm, request.body).csrf)) {
      // Best effort: a session the read models do not list (they lag, or are being rebuilt) cannot be
      // named here; its cookie still goes, and it ends with Sign out everywhere or its expiry.
      await app.credentialsInForce().catch(() => {});
      const session = await getDashboardSession(app.readModels, sha256Hex(token));
      if (session) await endDashboardSession(actingAs(app, { kind: 'dashboard_user', id: session.userId }, request.id), { sessionId: session.sessionId });
      reply.clearCookie(sessionCookieName(app), cookieOptions(app));
    }
    return reply.redirect('/dashboard/sign-in', 303);
  });

  // A lost laptop, a cookie that may have leaked: every session of the signed-in person ends, this one too.
  app.post('/dashboard/sign-out-everywhere', async function signOutOfEveryBrowser(request, reply) {
    const session = await loadSession(app, request);
    if (session && csrfOk(session.csrf, readForm(csrfForm, request.body).csrf)) {
      const sessionIds = await openSessionsWith(app.readModels, { sessionId: session.sessionId, userId: session.user.id }, app.clock.now());
      const position = await signOutEverywhere(actingAs(app, { kind: 'dashboard_user', id: session.user.id }, request.id), { teamId: session.user.teamId, userId: session.user.id }, { sessionIds });
      if (position !== null) await app.waitForWrite(position);
      reply.clearCookie(sessionCookieName(app), cookieOptions(app));
    }
    return reply.redirect('/dashboard/sign-in', 303);
  });
}
