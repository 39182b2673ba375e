import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';
import { insufficientScope, siteNotFound, siteNotLicensed, unauthorized, validationError } from '../domain/errors.ts';
import type { Scope } from '../domain/scopes.ts';
import type { SiteDoc } from '../readModels/sites.ts';
import type { Credential, CredentialResolver } from './credentials.ts';

/** Per-route access rule, set as `config: { access: { scope, site } }` on a route. */
export interface RouteAccess {
  scope: Scope;
  /** The route has a `siteId` path parameter the credential must reach. */
  site?: boolean;
  /**
   * Who refuses an unlicensed site: the hook with 403 (default), the route itself (ingestion's 402
   * billing gate), or nobody (`open`: seeing and removing where the site's events go, which the
   * delivery engine keeps sending while the site is unlicensed, is never closed to its team).
   */
  licence?: 'hook' | 'route' | 'open';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
  interface FastifyInstance {
    credentialResolvers: CredentialResolver[];
    /** Brings the credential read models up to the last credential change in the store (see credentialCatchUp); 503 past its bound. */
    credentialsInForce: () => Promise<void>;
  }
  interface FastifyRequest {
    credential: Credential | null;
    site: SiteDoc | null;
  }
}

/** The scheme name is case-insensitive (RFC 9110 §11.1), one or more spaces follow it (§11.6.2); the token is case-sensitive. */
const BEARER = /^[Bb][Ee][Aa][Rr][Ee][Rr] +([A-Za-z0-9._~+/-]+=*)$/;

/**
 * Bearer authentication for every route that declares `access`, in the spec's order:
 * 401 (credential), 403 INSUFFICIENT_SCOPE, 404 SITE_NOT_FOUND, 403 SITE_NOT_LICENSED.
 * It runs before the body is parsed, so unauthenticated bodies are never read.
 */
export const authenticate = fp(
  async (app: FastifyInstance, opts: { loadSite: (siteId: string) => Promise<SiteDoc | null> }) => {
    app.decorate('credentialResolvers', [] as CredentialResolver[]);
    app.decorateRequest('credential', null);
    app.decorateRequest('site', null);

    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const access = request.routeOptions.config.access;
      if (!access) return;
      const header = authorizationHeader(request.raw);
      // RFC 6750 §3.1: invalid_request is a 400; a 401 would send an OAuth client back to sign in, to the same refusal.
      if (header === null) {
        reply.header('www-authenticate', 'Bearer error="invalid_request"');
        throw validationError(SEVERAL_AUTHORIZATIONS);
      }
      const credential = await resolveCredential(app.credentialResolvers, header);
      // RFC 6750 §3: the challenge goes with the 401, with an error code only when a bearer token was
      // presented (§3.1: none for a missing one or another scheme), and names the scope with the 403.
      if (!credential) {
        reply.header('www-authenticate', bearerToken(header) === null ? 'Bearer' : 'Bearer error="invalid_token"');
        throw unauthorized();
      }
      request.credential = credential;
      if (!credential.scopes.has(access.scope)) {
        reply.header('www-authenticate', `Bearer error="insufficient_scope", scope="${access.scope}"`);
        throw insufficientScope(access.scope);
      }
      if (access.site) {
        const siteId = (request.params as { siteId?: string }).siteId ?? '';
        request.site = reachableSite(credential, await opts.loadSite(siteId), { licence: (access.licence ?? 'hook') === 'hook' });
      }
    });
  },
  { name: 'authenticate' },
);

/**
 * The site when the credential may reach it: 404 SITE_NOT_FOUND for a missing site, another team's,
 * or one outside the credential's sites; then 403 SITE_NOT_LICENSED (unless the caller checks the licence itself).
 */
export function reachableSite(credential: Credential, site: SiteDoc | null, options: { licence: boolean }): SiteDoc {
  if (!site || !mayReach(credential, site)) throw siteNotFound();
  if (options.licence && !site.licensed) throw siteNotLicensed();
  return site;
}

/** The credential's team's site, and one of its sites when it names some: the one rule for a site's routes, tools and lists. */
export function mayReach(credential: Credential, site: SiteDoc): boolean {
  return site.teamId === credential.teamId && (credential.siteIds === null || credential.siteIds.includes(site.id));
}

export const SEVERAL_AUTHORIZATIONS = 'Send one Authorization header, not several.';

/**
 * The request's Authorization header, or null when it came more than once: Node keeps the first and
 * drops the rest, while a proxy before us may have judged the request by another (RFC 9110 allows one).
 */
export function authorizationHeader(message: IncomingMessage): string | undefined | null {
  const raw = message.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization') seen += 1;
  return seen > 1 ? null : message.headers.authorization;
}

/** The Bearer token of an Authorization header, or null. */
export function bearerToken(header: string | undefined): string | null {
  const match = header ? BEARER.exec(header) : null;
  return match ? match[1]! : null;
}

export async function resolveCredential(resolvers: CredentialResolver[], header: string | undefined): Promise<Credential | null> {
  const token = bearerToken(header);
  if (!token) return null;
  const resolver = resolvers.find((r) => r.accepts(token));
  return resolver ? resolver.resolve(token) : null;
}
