import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { normaliseEmail } from '../../domain/email.ts';
import { clientGroup } from '../../lib/clientGroup.ts';
import type { OutgoingMail } from '../../ports/mailer.ts';
import { type UserDoc, findUserByEmail } from '../../readModels/users.ts';
import { formText, readForm } from '../web/forms.ts';
import { html, page, sendPage } from '../web/html.ts';
import { KnownPlaces } from '../web/knownPlaces.ts';
import { SignInThrottle, counterKey } from '../web/signInThrottle.ts';
import { noticeHtml } from './show.ts';

/** A link is good for an hour, once; an account gets at most one mail an hour, whoever set it off. */
const LINK_TTL_MS = 60 * 60_000;
/** Offers being looked up or mailed at once in this process; more are dropped (the refusal answers the same). */
const MAX_OFFERS_IN_FLIGHT = 8;
// The counter store does not forget a counter at its expiry (only at its next sweep): the issue time is
// in the link and in the key, and a link older than an hour is refused by its own time.
const linkKey = (email: string, token: string, issuedAt: number) => counterKey('signin-link', `${email}|${token}|${issuedAt}`);
const linkFields = z.object({ email: formText.transform(normaliseEmail), token: formText, issued: formText });

/**
 * When the per-account limit refuses a sign-in from a new place (guesses from elsewhere have used up
 * the account's failures), the account's address is mailed a link: opened from wherever its person
 * is, it makes that place a known one (KnownPlaces), where the account limit does not apply. The
 * password is still needed, and the per-place limits still count: the link only proves the mailbox.
 */
export function signInLinks(app: FastifyInstance) {
  let inFlight = 0;

  function linkMail(user: UserDoc, token: string, issuedAt: number): OutgoingMail {
    const link = `${app.config.PUBLIC_BASE_URL}/dashboard/sign-in/place?${new URLSearchParams({ email: user.email, token, issued: String(issuedAt) })}`;
    return {
      messageId: `<sign-in-link.${app.newId()}@${app.config.MAIL_DOMAIN}>`,
      from: { name: 'Outreach Integration Service', address: `no-reply@${app.config.MAIL_DOMAIN}` },
      to: { name: null, address: user.email },
      subject: 'Sign in to the dashboard from a new place',
      text: [
        'Sign-ins to your dashboard account failed many times in the last minutes from places it does not usually sign in from,',
        'so new places are refused for a while. If that was you, or you want to sign in from a new place now,',
        'open this link in the browser you sign in with (within an hour, once), then sign in with your password:',
        '',
        link,
        '',
        'If you did not try to sign in, someone else may be guessing your password: nothing was let in, and',
        'the places you signed in from before still work. Consider a longer password.',
      ].join('\r\n'),
      inReplyTo: null,
      references: [],
    };
  }

  /** Takes the address's one mail of this hour (one counter write, for any address, account or not). */
  async function takeHourlySlot(email: string, at: number): Promise<boolean> {
    const hour = Math.floor(at / LINK_TTL_MS);
    return (await app.counters.increment(counterKey('signin-link-mail', `${email}|${hour}`), 1, new Date((hour + 2) * LINK_TTL_MS))) === 1;
  }

  return {
    /**
     * Mails the account of `email`, if any, a link (at most one an hour per address). Not awaited by
     * the caller's answer, and the same work up to the lookup for every address: a refusal must not
     * tell whether the address has an account.
     */
    async offer(email: string): Promise<void> {
      if (inFlight >= MAX_OFFERS_IN_FLIGHT) return;
      inFlight++;
      try {
        const at = app.clock.now().getTime();
        if (!(await takeHourlySlot(email, at))) return;
        const user = await findUserByEmail(app.readModels, email);
        if (!user?.passwordHash) return;
        const token = randomBytes(32).toString('base64url');
        await app.counters.increment(linkKey(user.email, token, at), 1, new Date(at + LINK_TTL_MS));
        // A mail that fails is not offered again within the hour: its outcome may be unknown (the relay may have it).
        await app.mailer.send(linkMail(user, token, at)).catch((error: unknown) => app.log.warn({ err: error }, 'the sign-in link mail could not be sent'));
      } finally {
        inFlight--;
      }
    },
  };
}

export async function signInLinkRoutes(app: FastifyInstance) {
  const known = new KnownPlaces(app.counters, app.clock);

  // A page with a button, not an action on GET: a mail scanner that fetches links must not use it up.
  app.get('/dashboard/sign-in/place', async function signInLinkPage(request: FastifyRequest<{ Querystring: Record<string, unknown> }>, reply) {
    const { email, token, issued } = readForm(linkFields, request.query);
    return sendPage(
      reply,
      200,
      page(
        'Sign in from here',
        html`<p>Let this browser's network sign in to ${email}, then sign in with your password.</p>
          <form method="post" action="/dashboard/sign-in/place">
            <input type="hidden" name="email" value="${email}"><input type="hidden" name="token" value="${token}"><input type="hidden" name="issued" value="${issued}">
            <button type="submit">Sign in from here</button>
          </form>`,
      ),
    );
  });

  // Guessing links is as hopeless as guessing passwords (256 bits), but each try is a counter write: 20 refused per 15 minutes per client.
  const refusals = new SignInThrottle(app.counters, app.clock, 20);
  const refusedPage = (error: string) => page('Sign in from here', html`${noticeHtml({ error })}<p><a href="/dashboard/sign-in">Sign in</a></p>`);

  app.post('/dashboard/sign-in/place', async function useSignInLink(request, reply) {
    const { email, token, issued } = readForm(linkFields, request.body);
    const client = clientGroup(request.ip);
    const at = app.clock.now().getTime();
    const issuedAt = /^\d{1,15}$/.test(issued) ? Number(issued) : Number.NaN;
    const fresh = issuedAt <= at && at - issuedAt < LINK_TTL_MS;
    const wait = await refusals.attempt(`place|${client}`, at);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      return sendPage(reply, 429, refusedPage(`Too many links that were not valid from here. Try again in ${Math.ceil(wait / 60)} minutes.`));
    }
    const wellFormed = email !== '' && token.length === 43 && fresh;
    const key = linkKey(email, token, issuedAt);
    const expires = new Date(issuedAt + LINK_TTL_MS);
    // Taken once: of two uses at once, one reads 0 and the other -1 (and puts it back).
    const left = wellFormed ? await app.counters.increment(key, -1, expires) : -1;
    if (left < 0) {
      if (wellFormed) await app.counters.increment(key, 1, expires);
      return sendPage(reply, 400, refusedPage('This link is not valid: it was used already, is older than an hour, or was cut short. Try to sign in again to be sent another (at most one an hour).'));
    }
    await Promise.all([refusals.giveBack(`place|${client}`, at), known.remember(email, client)]);
    return reply.redirect('/dashboard/sign-in?place=known', 303);
  });
}
