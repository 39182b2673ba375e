import type { FastifyReply } from 'fastify';
import { alreadySentBody } from '../web/sentOnce.ts';
import { type SafeHtml, html, page, sendPage } from '../web/html.ts';
import type { SignedIn } from '../web/session.ts';

/** A page of the signed-in dashboard: the navigation, the sign-out form with its CSRF token. */
export const showSignedIn = (reply: FastifyReply, s: SignedIn, title: string, body: SafeHtml, status = 200) =>
  sendPage(reply, status, page(title, body, { signedIn: { email: s.user.email, csrf: s.csrf } }));

/** A rule's refusal (a TenancyError's lower-case message) as a sentence on a page. */
export const asSentence = (message: string) => `${message[0]!.toUpperCase()}${message.slice(1)}.`;

/** What a page reports at its top after a form: an error (announced) or a plain result. */
export const noticeHtml = (notice: { error?: string; info?: string } | undefined) =>
  html`${notice?.error ? html`<p class="error" role="alert">${notice.error}</p>` : ''}${notice?.info ? html`<p role="status">${notice.info}</p>` : ''}`;

/**
 * REST refuses the calls on a site without an active licence (403 SITE_NOT_LICENSED) but listing and
 * deleting its webhook subscriptions; so does the dashboard, for the site's pages and actions (its
 * inbox, its agents, its webhook forms but Delete).
 */
export const siteNotLicensedPage = (reply: FastifyReply, s: SignedIn, domain: string) =>
  showSignedIn(reply, s, 'Site not licensed', html`<p class="error" role="alert">The site ${domain} has no active licence: its inbox, agents and webhook forms are closed until it is licensed again (its webhook subscriptions can still be deleted).</p><p><a href="/dashboard">Back to the dashboard</a></p>`, 403);

/** In a list of the team's sites, an unlicensed site's section: its name and why nothing else is shown (REST refuses its reads too). */
export const unlicensedSiteSection = (site: { id: string; domain: string }) =>
  html`<h2>${site.domain} <small>(${site.id})</small></h2><p role="status">No active licence: this site's data and forms are closed until it is licensed again.</p>`;

/** A secret's form sent a second time (a reload of the page that showed the secret): 409, nothing done (see sentOnce.ts). */
export const sentAgain = (reply: FastifyReply, s: SignedIn, what: string, back: { href: string; label: string }) =>
  showSignedIn(reply, s, 'Already sent', alreadySentBody(what, back), 409);
