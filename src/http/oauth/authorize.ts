import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { giveConsent } from '../../commands/oauth.ts';
import { isScope } from '../../domain/scopes.ts';
import { listSitesOfTeam } from '../../readModels/sites.ts';
import { type CommandContext, inRequest } from '../../commands/context.ts';
import { ClientMetadataError, type ClientMetadataSource } from '../../ports/clientMetadata.ts';
import { type OAuthClientView, resolveClient } from './clients.ts';
import { servedResource } from './resources.ts';
import { csrfForm, formList, formText, readForm } from '../web/forms.ts';
import { assertNever } from '../../domain/decider.ts';
import { type SafeHtml, html, page, sendPage } from '../web/html.ts';
import { SCOPE_DESCRIPTIONS } from '../web/scopeDescriptions.ts';
import { type SignedIn, csrfOk, loadSession } from '../web/session.ts';
import type { AuthenticatedClient } from './clientAuthentication.ts';
import type { AuthorizeErrorCode } from './errors.ts';
import { canAuthorizeApps } from '../../domain/team.ts';
import { withoutBidiControls } from '../../domain/text.ts';

/** The consent screen's own fields; the authorization request's parameters travel beside them. */
const consentForm = csrfForm.extend({ decision: formText, site_ids: formList });

/** S256 of a verifier is 32 bytes in base64url: exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const AUTHORIZE_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'resource'] as const;

interface AuthorizeRequest {
  client: AuthenticatedClient;
  redirectUri: string;
  /** false when the request named none and the client's one registered URI stands in (OAuth 2.1 §4.1.1). */
  redirectUriGiven: boolean;
  scopes: string[];
  /** Optional (OAuth 2.1 §4.1.1: PKCE already ties the code to the client's own request); echoed back when sent. */
  state: string | undefined;
  codeChallenge: string;
  /** RFC 8707 resource the tokens will be for; null when the client named none. */
  resource: string | null;
}

type Outcome =
  | { kind: 'ok'; request: AuthorizeRequest }
  /** The redirect URI cannot be trusted: tell the user, never redirect (RFC 6749 §4.1.2.1). */
  | { kind: 'page'; message: string }
  /** `teamId`: the team that registered the client (null: a metadata-document or self-registered one). */
  | { kind: 'redirect'; redirectUri: string; state: string | undefined; error: AuthorizeErrorCode; description: string; teamId: string | null };

function single(raw: unknown, name: string): string | undefined | null {
  const value = (raw as Record<string, unknown> | undefined)?.[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') return null; // repeated or malformed
  return value;
}

async function validate(services: CommandContext & { clientMetadata: ClientMetadataSource }, issuer: string, raw: unknown): Promise<Outcome> {
  const clientId = single(raw, 'client_id');
  if (clientId === null) return { kind: 'page', message: 'client_id is repeated.' };
  if (!clientId) return { kind: 'page', message: 'The request has no client_id.' };
  let client: OAuthClientView | null;
  try {
    client = await resolveClient(services, services.clientMetadata, clientId);
  } catch (error) {
    if (error instanceof ClientMetadataError) return { kind: 'page', message: `The app's client metadata document ${error.forCaller()}.` };
    throw error;
  }
  if (!client) return { kind: 'page', message: 'This app is unknown or has been deleted.' };
  const sent = single(raw, 'redirect_uri');
  if (sent === null) return { kind: 'page', message: 'redirect_uri is repeated.' };
  // The consent form carries the URI the page showed, marked when the app had named none.
  const omitted = single(raw, 'redirect_uri_omitted') === '1';
  // OAuth 2.1 §4.1.1: optional when the client registered exactly one, which is then the whole URI
  // (RFC 6749 §3.1.2.3: a loopback one leaves its port to the request, so it must be sent).
  const only = client.redirectUris.length === 1 ? client.redirectUris[0]! : null;
  if ((!sent || omitted) && only === null) return { kind: 'page', message: 'The request has no redirect_uri (required: this app registered several).' };
  if ((!sent || omitted) && LOOPBACK_PORT.test(only!)) return { kind: 'page', message: 'The request has no redirect_uri (required for a loopback redirect URI: its port is chosen when the app runs).' };
  // The decision goes where the consent page said, or nowhere: the app's one URI may have changed meanwhile (a metadata document).
  if (sent && omitted && sent !== only) return { kind: 'page', message: "The app's redirect URI changed while you decided. Start again from the app." };
  const redirectUri = sent || only!;
  if (sent && !redirectUriRegistered(client.redirectUris, sent)) return { kind: 'page', message: 'The redirect_uri does not match any redirect URI registered for this app.' };
  const redirectUriGiven = Boolean(sent) && !omitted;

  const state = single(raw, 'state');
  const fail = (error: AuthorizeErrorCode, description: string): Outcome => ({
    kind: 'redirect',
    redirectUri,
    state: state ?? undefined,
    error,
    description,
    teamId: client.teamId,
  });
  for (const name of AUTHORIZE_PARAMS) if (single(raw, name) === null) return fail('invalid_request', `Parameter ${name} is repeated.`);
  const responseType = single(raw, 'response_type');
  if (!responseType) return fail('invalid_request', 'response_type is required.');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
  const codeChallenge = single(raw, 'code_challenge');
  if (!codeChallenge) return fail('invalid_request', 'code_challenge is required (PKCE with S256).');
  if (single(raw, 'code_challenge_method') !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256.');
  if (!S256_CHALLENGE.test(codeChallenge)) return fail('invalid_request', 'code_challenge must be 43 base64url characters (S256).');
  const scopes = [...new Set((single(raw, 'scope') ?? '').split(' ').filter(Boolean))];
  if (scopes.length === 0) return fail('invalid_scope', 'scope is required.');
  const unknown = scopes.filter((s) => !isScope(s));
  // Not echoed: the error page would show anyone's text on this origin.
  if (unknown.length > 0) return fail('invalid_scope', `${unknown.length === 1 ? 'A scope is' : `${unknown.length} scopes are`} unknown (the authorization server metadata lists scopes_supported).`);
  let resource: string | null = null;
  const rawResource = single(raw, 'resource');
  if (rawResource) {
    const served = servedResource(issuer, rawResource);
    if ('problem' in served) return fail('invalid_target', served.problem);
    resource = served.resource;
  }
  return { kind: 'ok', request: { client, redirectUri, redirectUriGiven, scopes, state: state ?? undefined, codeChallenge, resource } };
}

/** `http://127.0.0.1` or `http://[::1]` as written, then its port (RFC 8252 §7.3 loopback IP literals). */
const LOOPBACK_PORT = /^(http:\/\/(?:127\.0\.0\.1|\[::1\]))(?::(\d{1,5}))?(?=[/?]|$)/;

/**
 * A registered redirect URI, compared exactly as written; but for a loopback IP literal over http (a
 * native app's listener, RFC 8252 §7.3) any port is allowed, every other character still exact. The
 * code is bound to the URI as sent, so the token request must repeat that port.
 */
export function redirectUriRegistered(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const port = LOOPBACK_PORT.exec(requested);
  if (!port || (port[2] !== undefined && Number(port[2]) > 65_535)) return false;
  const withoutPort = (uri: string) => uri.replace(LOOPBACK_PORT, '$1');
  return registered.some((uri) => LOOPBACK_PORT.test(uri) && withoutPort(uri) === withoutPort(requested));
}

/**
 * RFC 6749 §4.1.2 / RFC 9207: parameters appended to the registered URI, whose own query is kept as
 * written (RFC 6749 §3.1.2: re-serialising it would turn `?flag` into `?flag=`). The URL is still
 * serialised by the URL parser, so an international host or path goes out encoded.
 */
function redirectTo(issuer: string, redirectUri: string, params: Record<string, string | undefined>): string {
  const added = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) added.append(k, v);
  added.append('iss', issuer);
  const url = new URL(redirectUri);
  url.hash = '';
  const own = url.search.replace(/^\?/, '');
  url.search = own === '' || own.endsWith('&') ? `${own}${added}` : `${own}&${added}`;
  return url.href;
}

/** Owners and admins only; a dashboard client only by its own team's, any other client by any team's. */
const canApprove = (s: SignedIn, client: AuthenticatedClient) =>
  canAuthorizeApps(s.user.role) && (client.teamId === null || s.user.teamId === client.teamId);

/** What the person is told about who the app is: only a metadata document's host is vouched for. */
function whoIsAsking(client: AuthenticatedClient): SafeHtml {
  switch (client.origin) {
    case 'dashboard':
      return html`<p><small>Registered by your team in the OAuth apps area.</small></p>`;
    case 'metadata_document':
      return html`<p><small>Identified by its metadata document on <strong>${client.host}</strong> (<code>${client.clientId}</code>). The name is what that site says about itself.</small></p>`;
    case 'dynamic':
      return html`<p><small>This app registered itself; its name is not verified. Approve only if you started this connection.</small></p>`;
    default:
      return assertNever(client.origin);
  }
}

function hiddenParams(r: AuthorizeRequest): SafeHtml {
  const values: Record<string, string> = {
    response_type: 'code',
    client_id: r.client.clientId,
    // The URI the page shows; marked when the app named none (the code is then issued as for no redirect_uri).
    redirect_uri: r.redirectUri,
    ...(r.redirectUriGiven ? {} : { redirect_uri_omitted: '1' }),
    scope: r.scopes.join(' '),
    code_challenge: r.codeChallenge,
    code_challenge_method: 'S256',
    ...(r.state ? { state: r.state } : {}),
    ...(r.resource ? { resource: r.resource } : {}),
  };
  return html`${Object.entries(values).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}`;
}

/** GET and POST /oauth/authorize: validation, sign-in hand-off, consent screen, decision. */
export async function authorizeRoutes(app: FastifyInstance) {
  /** Read per request: the issuer is configuration a test may change after start. */
  const issuer = () => app.config.PUBLIC_BASE_URL;
  const errorPage = (reply: FastifyReply, status: number, message: string) =>
    sendPage(reply, status, page('Authorization failed', html`<p class="error" role="alert">${message}</p><p>Return to the app you came from and try again.</p>`));
  /**
   * An invalid authorization request: back to the app's redirect URI only when the signed-in person's
   * own team registered the app (they vouch for that URI, RFC 9700 §4.11.2); otherwise shown here.
   * Any team's admin can register any URI: sending other people there from this origin, signed in
   * or not, would make the authorization server an open redirector.
   */
  const refuse = (reply: FastifyReply, outcome: Extract<Outcome, { kind: 'redirect' }>, session: SignedIn | null) => {
    const vouched = outcome.teamId !== null && session?.user.teamId === outcome.teamId;
    if (!vouched) return errorPage(reply, 400, `The app's authorization request is not valid (${outcome.error}): ${outcome.description}`);
    return reply.redirect(redirectTo(issuer(), outcome.redirectUri, { error: outcome.error, error_description: outcome.description, state: outcome.state }), 303);
  };

  const consentPage = async (reply: FastifyReply, s: SignedIn, request: AuthorizeRequest, error?: string, status = 200) => {
    // A name registered before names were checked may still carry a bidirectional override: shown without it.
    const r = { ...request, client: { ...request.client, name: withoutBidiControls(request.client.name) } };
    const host = new URL(r.redirectUri).host;
    const signedIn = { email: s.user.email, csrf: s.csrf };
    if (!canApprove(s, r.client)) {
      const otherTeams = r.client.teamId !== null && s.user.teamId !== r.client.teamId;
      const why = otherTeams
        ? 'This app was registered by another team. Only owners and admins of that team can authorize it.'
        : `Only team owners and admins can authorize apps. You are signed in as a ${s.user.role}: ask an owner or admin of your team to connect ${r.client.name}.`;
      // Another team's app: its redirect URI is not vouched for to this person (see refuse), so no way back to it is offered.
      if (otherTeams) return sendPage(reply, 403, page(`Authorize ${r.client.name}`, html`<p class="error" role="alert">${why}</p>`, { signedIn }));
      return sendPage(
        reply,
        403,
        page(
          `Authorize ${r.client.name}`,
          html`<p class="error" role="alert">${why}</p>
            <form method="post" action="/oauth/authorize"><input type="hidden" name="csrf" value="${s.csrf}">${hiddenParams(r)}
              <button type="submit" name="decision" value="deny">Go back to ${r.client.name}</button></form>`,
          { signedIn },
        ),
      );
    }
    const sites = await listSitesOfTeam(app.readModels, s.user.teamId, { sortBy: 'createdAt' });
    return sendPage(
      reply,
      status,
      page(
        `Authorize ${r.client.name}`,
        html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}
          <p><strong>${r.client.name}</strong> wants to access your team's data. After you approve, you will be sent to <strong>${host}</strong>.</p>
          ${whoIsAsking(r.client)}
          ${r.resource ? html`<p>Its access will be valid for <code>${r.resource}</code>.</p>` : ''}
          <form method="post" action="/oauth/authorize">
            <input type="hidden" name="csrf" value="${s.csrf}">${hiddenParams(r)}
            <h2>It asks for</h2>
            <ul>${r.scopes.map((sc) => html`<li><code>${sc}</code>: ${SCOPE_DESCRIPTIONS[sc as keyof typeof SCOPE_DESCRIPTIONS]}</li>`)}</ul>
            <fieldset><legend>Sites it may reach (choose one or more)</legend>
              ${sites.length ? sites.map((site) => html`<label><input type="checkbox" name="site_ids" value="${site.id}"> ${site.domain} <small>(${site.id})</small>${site.licensed ? '' : html` <small>no active licence: the app is refused on it (SITE_NOT_LICENSED) until it is licensed again</small>`}</label>`) : html`<p>Your team has no sites.</p>`}
            </fieldset>
            <button type="submit" name="decision" value="approve">Approve</button>
            <button type="submit" name="decision" value="deny">Deny</button>
          </form>`,
        { signedIn },
      ),
    );
  };

  app.get('/oauth/authorize', async function authorizationRequest(request: FastifyRequest, reply) {
    const outcome = await validate(app, issuer(), request.query);
    if (outcome.kind === 'page') return errorPage(reply, 400, outcome.message);
    const session = await loadSession(app, request);
    if (outcome.kind === 'redirect') return refuse(reply, outcome, session);
    if (!session) return reply.redirect(`/dashboard/sign-in?return_to=${encodeURIComponent(request.url)}`, 303);
    return consentPage(reply, session, outcome.request);
  });

  app.post('/oauth/authorize', async function authorizationDecision(request: FastifyRequest, reply) {
    const session = await loadSession(app, request);
    if (!session) return errorPage(reply, 401, 'Your session has ended. Start again from the app.');
    const form = readForm(consentForm, request.body);
    if (!csrfOk(session.csrf, form.csrf)) return errorPage(reply, 403, "The form's CSRF token is missing or wrong. Start again from the app.");
    // The authorization request's own parameters are re-validated as the GET did (a repeated one is an error).
    const outcome = await validate(app, issuer(), request.body);
    if (outcome.kind === 'page') return errorPage(reply, 400, outcome.message);
    if (outcome.kind === 'redirect') return refuse(reply, outcome, session);
    const r = outcome.request;
    if (form.decision === 'deny') {
      return reply.redirect(redirectTo(issuer(), r.redirectUri, { error: 'access_denied', error_description: 'The user denied the request.', state: r.state }), 303);
    }
    if (form.decision !== 'approve') return consentPage(reply, session, r, 'Choose Approve or Deny.', 400);
    if (!canApprove(session, r.client)) return consentPage(reply, session, r);
    const picked = form.site_ids;
    const teamSites = await listSitesOfTeam(app.readModels, session.user.teamId);
    if (picked.length === 0) return consentPage(reply, session, r, 'Choose at least one site.', 400);
    if (!picked.every((id) => teamSites.some((s) => s.id === id))) return consentPage(reply, session, r, 'Choose sites of your team only.', 400);
    const { code } = await giveConsent(inRequest(app, request.id), {
      clientId: r.client.clientId,
      teamId: session.user.teamId,
      userId: session.user.id,
      siteIds: picked,
      scopes: r.scopes,
      resource: r.resource,
      redirectUri: r.redirectUri,
      redirectUriGiven: r.redirectUriGiven,
      codeChallenge: r.codeChallenge,
    });
    return reply.redirect(redirectTo(issuer(), r.redirectUri, { code, state: r.state }), 303);
  });
}
