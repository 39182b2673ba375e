import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sessionStampOf, sha256Hex } from '../../commands/credentials.ts';
import { constantTimeEqual } from '../../commands/oauth.ts';
import type { Clock } from '../../ports/clock.ts';
import { getDashboardSession } from '../../readModels/dashboardSessions.ts';
import { type UserDoc, getUser } from '../../readModels/users.ts';
import type { Config } from '../../config.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';

export interface SignedIn {
  sessionId: string;
  user: UserDoc;
  /** CSRF token bound to this session: an HMAC of the session token, so it needs no storage. */
  csrf: string;
}

/** What sessions and their cookies read: the issuer (read per request: a test may change it after start), the read models, the clock. */
export interface SessionPorts {
  config: Pick<Config, 'PUBLIC_BASE_URL'>;
  readModels: ReadModelStore;
  clock: Clock;
  /** Brings the sessions and users read models up to the last credential change (another process's sign-out, removal or password change). */
  credentialsInForce?: () => Promise<void>;
}

const secure = (services: Pick<SessionPorts, 'config'>) => services.config.PUBLIC_BASE_URL.startsWith('https:');
/** `__Host-` pins the cookie to this host and path / when it is Secure. */
export const sessionCookieName = (services: Pick<SessionPorts, 'config'>) => (secure(services) ? '__Host-svc_session' : 'svc_session');
export const signInCsrfCookieName = (services: Pick<SessionPorts, 'config'>) => (secure(services) ? '__Host-svc_signin' : 'svc_signin');

export const csrfFor = (sessionToken: string) => createHmac('sha256', sessionToken).update('dashboard-csrf').digest('base64url');

export function cookieOptions(services: Pick<SessionPorts, 'config'>, maxAgeSeconds?: number) {
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: secure(services), ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}) };
}

/** The session token the request's cookie holds, if it has the shape of one. */
export function sessionTokenOf(services: Pick<SessionPorts, 'config'>, request: FastifyRequest): string | null {
  const token = request.cookies[sessionCookieName(services)];
  return token && token.length <= 200 ? token : null;
}

export async function loadSession(services: SessionPorts, request: FastifyRequest): Promise<SignedIn | null> {
  const token = sessionTokenOf(services, request);
  if (!token) return null;
  await services.credentialsInForce?.();
  const session = await getDashboardSession(services.readModels, sha256Hex(token));
  if (!session || session.ended || Date.parse(session.expiresAt) <= services.clock.now().getTime()) return null;
  const user = await getUser(services.readModels, session.userId);
  // Removed from the team, signed in with a password the user no longer has, or before they signed out
  // everywhere. A session that names no password (started before sessions recorded one, or by an older
  // server) is over too: one more sign-in.
  const stamp = user ? sessionStampOf(user) : null;
  if (!user || stamp === null || session.credential !== stamp) return null;
  return { sessionId: session.sessionId, user, csrf: csrfFor(token) };
}

export function csrfOk(expected: string, presented: unknown): boolean {
  return typeof presented === 'string' && presented.length > 0 && constantTimeEqual(expected, presented);
}

/** Double-submit token for the sign-in form (there is no session yet to bind it to). */
export function issueSignInCsrf(services: Pick<SessionPorts, 'config'>, reply: FastifyReply): string {
  // The browser's token when it has one: each form shown anew replaced it, and every other open
  // sign-in or join tab (a session that expired with several dashboard tabs) was refused as expired.
  const held = reply.request.cookies?.[signInCsrfCookieName(services)];
  const token = held && /^[A-Za-z0-9_-]{32}$/.test(held) ? held : randomBytes(24).toString('base64url');
  reply.setCookie(signInCsrfCookieName(services), token, cookieOptions(services, 3600));
  return token;
}

/**
 * Only paths on this service, and only the dashboard or the authorization endpoint. Only printable
 * ASCII, as a browser sends a path: anything else cannot go into a Location header (a 500).
 */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string') return '/dashboard';
  if (!/^\/(dashboard(\/|$|\?)|oauth\/authorize\?)/.test(value) || value.includes('\\') || !/^[\x21-\x7e]+$/.test(value)) return '/dashboard';
  return value;
}

