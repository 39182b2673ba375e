import type { FastifyReply } from 'fastify';
import { type SafeHtml, page, sendPage } from '../web/html.ts';
import type { SignedIn } from '../web/session.ts';

/** A page of the signed-in dashboard: the navigation, the sign-out form with its CSRF token. */
export const showSignedIn = (reply: FastifyReply, s: SignedIn, title: string, body: SafeHtml, status = 200) =>
  sendPage(reply, status, page(title, body, { signedIn: { email: s.user.email, csrf: s.csrf } }));
