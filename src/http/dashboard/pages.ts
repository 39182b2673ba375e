import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { OAuthClientInputError, registerOAuthClient, rotateOAuthClientSecret } from '../../commands/oauth.ts';
import { TenancyError, createApiKey, revokeApiKey } from '../../commands/tenancy.ts';
import { OAuthClientRuleError, TOKEN_ENDPOINT_AUTH_METHODS, type TokenEndpointAuthMethod } from '../../domain/oauthClient.ts';
import { SCOPES } from '../../domain/scopes.ts';
import { getApiKey, listApiKeysOfTeam } from '../../readModels/apiKeys.ts';
import { listOAuthClientsOfTeam } from '../../readModels/oauthClients.ts';
import { getSite, listSitesOfTeam } from '../../readModels/sites.ts';
import { type Typed, csrfForm, firstProblem, formList, formText, parseForm, readForm, typedIn } from '../web/forms.ts';
import { type SafeHtml, html, page, sendPage } from '../web/html.ts';
import { SCOPE_DESCRIPTIONS } from '../web/scopeDescriptions.ts';
import { type SignedIn, csrfOk, loadSession } from '../web/session.ts';
import { inboxPages } from './inbox.ts';
import { deleteOAuthClientAndSweep } from './oauthClientDeletion.ts';
import { sentAgain, showSignedIn, siteNotLicensedPage } from './show.ts';
import { agentPages } from './agents.ts';
import { connectedAppRoutes, connectedAppsSection } from './connectedApps.ts';
import { webhookPages } from './webhooks.ts';
import { teamPages } from './team.ts';
import { actingFor } from '../actingFor.ts';
import { aRole } from '../../domain/team.ts';
import { onFirstSending, onceField } from '../web/sentOnce.ts';

declare module 'fastify' {
  interface FastifyRequest {
    dashboard: SignedIn | null;
  }
}

const oauthAppForm = z.object({
  token_endpoint_auth_method: formText.pipe(z.enum(TOKEN_ENDPOINT_AUTH_METHODS, { error: 'Choose a client type.' })),
  // The command judges the name and the URIs (OAuthClientInputError), with its own messages.
  name: formText,
  redirect_uris: formText.transform((text) => text.split(/\r?\n/)),
});

const API_KEY_NAME = 'The name must be 1 to 120 characters.';
const apiKeyForm = z.object({
  name: formText.pipe(z.string().trim().min(1, API_KEY_NAME).max(120, API_KEY_NAME)),
  scopes: formList.pipe(z.array(z.enum(SCOPES, { error: 'Choose one or more scopes.' })).min(1, 'Choose one or more scopes.')),
  site_id: formText.transform((id) => id || null),
});

export const canManage = (s: SignedIn) => s.user.role === 'owner' || s.user.role === 'admin';

const METHOD_LABELS: Record<TokenEndpointAuthMethod, string> = {
  none: 'Public (none): PKCE only, no secret',
  client_secret_basic: 'Confidential (client_secret_basic): secret in the Authorization header',
  client_secret_post: 'Confidential (client_secret_post): secret in the request body',
};

/** The dashboard behind sign-in: the inbox, OAuth apps, API keys, each site's webhook subscriptions and agents. */
export async function dashboardPages(app: FastifyInstance) {
  const waitForWrite = app.waitForWrite;
  app.decorateRequest('dashboard', null);
  app.addHook('preHandler', async function requireSignedIn(request, reply) {
    const session = await loadSession(app, request);
    if (!session) {
      if (request.method === 'GET') return reply.redirect(`/dashboard/sign-in?return_to=${encodeURIComponent(request.url)}`, 303);
      return sendPage(reply, 401, page('Signed out', html`<p>Your session has ended. <a href="/dashboard/sign-in">Sign in</a> again.</p>`));
    }
    if (request.method === 'POST' && !csrfOk(session.csrf, readForm(csrfForm, request.body).csrf)) {
      return sendPage(reply, 403, page('Request refused', html`<p class="error">The form's CSRF token is missing or wrong. Go back, reload the page and try again.</p>`));
    }
    request.dashboard = session;
    // One gate for every route of a site (`:siteId`); a site of another team is left to the route (404).
    const siteId = (request.params as { siteId?: unknown } | undefined)?.siteId;
    if (typeof siteId !== 'string') return;
    const site = await getSite(app.readModels, siteId);
    if (site && site.teamId === session.user.teamId && !site.licensed) return siteNotLicensedPage(reply, session, site.domain);
  });

  const show = showSignedIn;
  const OAUTH_APPS = { href: '/dashboard/oauth-apps', label: 'Back to OAuth apps' };
  const forbidden = (reply: FastifyReply, s: SignedIn) =>
    show(reply, s, 'Not allowed', html`<p class="error">Only team owners and admins can do this. You are ${aRole(s.user.role)}.</p>`, 403);
  const sites = (s: SignedIn) => listSitesOfTeam(app.readModels, s.user.teamId);

  app.get('/dashboard', async function home(request, reply) {
    const s = request.dashboard!;
    return show(
      reply,
      s,
      'Dashboard',
      html`<p>Signed in as ${s.user.email} (${s.user.role}).</p>
        <ul><li><a href="/dashboard/inbox">Inbox</a></li><li><a href="/dashboard/oauth-apps">OAuth apps</a></li><li><a href="/dashboard/api-keys">API keys</a></li><li><a href="/dashboard/webhooks">Webhook subscriptions</a></li><li><a href="/dashboard/agents">Agents</a></li><li><a href="/dashboard/team">Team and password</a></li></ul>
        <form method="post" action="/dashboard/sign-out-everywhere"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit">Sign out everywhere</button> <small>(every browser where you are signed in, this one too)</small></form>`,
    );
  });

  // ---- OAuth apps ----
  const oauthAppsPage = async (reply: FastifyReply, s: SignedIn, error?: string, status = 200, typed?: Typed) => {
    const clients = await listOAuthClientsOfTeam(app.readModels, s.user.teamId);
    const rows = clients.map(
      (c) => html`<tr>
        <td>${c.name}</td><td><code>${c.id}</code></td><td>${c.tokenEndpointAuthMethod}</td>
        <td>${c.redirectUris.map((u) => html`<div>${u}</div>`)}</td><td>${c.createdAt}</td>
        <td>${
          canManage(s)
            ? html`${c.tokenEndpointAuthMethod !== 'none'
                  ? html`<form method="post" action="/dashboard/oauth-apps/${c.id}/rotate-secret"><input type="hidden" name="csrf" value="${s.csrf}">${onceField()}<button type="submit">Rotate secret of ${c.name}</button></form>`
                  : ''}
                <form method="post" action="/dashboard/oauth-apps/${c.id}/delete"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit">Delete ${c.name}</button></form>`
            : ''
        }</td></tr>`,
    );
    return show(
      reply,
      s,
      'OAuth apps',
      html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}
        ${clients.length ? html`<table><thead><tr><th>Name</th><th>client_id</th><th>Authentication</th><th>Redirect URIs</th><th>Registered</th><th></th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>No OAuth apps yet.</p>`}
        ${
          canManage(s)
            ? html`<h2>Register an app</h2>
              <form method="post" action="/dashboard/oauth-apps">
                <input type="hidden" name="csrf" value="${s.csrf}">${onceField()}
                <label for="name">Name</label><input id="name" name="name" type="text" maxlength="120" required value="${typed?.text('name') ?? ''}">
                <label for="redirect_uris">Redirect URIs (one per line; HTTPS, or http://localhost / 127.0.0.1 for desktop clients)</label>
                <textarea id="redirect_uris" name="redirect_uris" rows="3" required>${typed?.text('redirect_uris') ?? ''}</textarea>
                <fieldset><legend>Client type</legend>
                  ${TOKEN_ENDPOINT_AUTH_METHODS.map(
                    (m, i) =>
                      html`<label><input type="radio" name="token_endpoint_auth_method" value="${m}" ${(typed ? typed.text('token_endpoint_auth_method') === m : i === 0) ? html`checked` : ''}> ${METHOD_LABELS[m]}</label>`,
                  )}
                </fieldset>
                <button type="submit">Register app</button>
              </form>`
            : html`<p>Only owners and admins can register apps.</p>`
        }
        ${await connectedAppsSection(app, s, canManage(s))}`,
      status,
    );
  };

  app.get('/dashboard/oauth-apps', async function listOAuthApps(request, reply) {
    return oauthAppsPage(reply, request.dashboard!);
  });

  app.post('/dashboard/oauth-apps', async function registerOAuthApp(request, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return forbidden(reply, s);
    const form = parseForm(oauthAppForm, request.body);
    if (!form.success) return oauthAppsPage(reply, s, firstProblem(form.error), 400, typedIn(request.body));
    try {
      return await onFirstSending(app, s, request.body, async () => {
        const r = await registerOAuthClient(actingFor(app, request), {
          teamId: s.user.teamId,
          userId: s.user.id,
          name: form.data.name,
          redirectUris: form.data.redirect_uris,
          tokenEndpointAuthMethod: form.data.token_endpoint_auth_method,
        });
        await waitForWrite(r.position, 'answer');
        return show(
          reply,
          s,
          'App registered',
          html`<p>client_id: <code id="client_id">${r.clientId}</code></p>
            ${
              r.clientSecret
                ? html`<p><strong>Copy the client secret now. It is shown once and cannot be retrieved later.</strong></p><p class="secret" id="client_secret">${r.clientSecret}</p>`
                : html`<p>This is a public client: it has no secret and must use PKCE (it always must).</p>`
            }
            <p><a href="/dashboard/oauth-apps">Back to OAuth apps</a></p>`,
          201,
        );
      }, () => sentAgain(reply, s, 'the app was registered', OAUTH_APPS));
    } catch (error) {
      if (error instanceof OAuthClientInputError) return oauthAppsPage(reply, s, error.message, 400, typedIn(request.body));
      throw error;
    }
  });

  app.post('/dashboard/oauth-apps/:clientId/rotate-secret', async function rotateOAuthAppSecret(request: FastifyRequest<{ Params: { clientId: string } }>, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return forbidden(reply, s);
    try {
      return await onFirstSending(app, s, request.body, async () => {
        const r = await rotateOAuthClientSecret(actingFor(app, request), { clientId: request.params.clientId, teamId: s.user.teamId, userId: s.user.id });
        await waitForWrite(r.position, 'answer');
        return show(
          reply,
          s,
          'Secret rotated',
          html`<p>The old secret stopped working. Access tokens already issued stay valid until they expire; refresh tokens now need this new secret.</p>
            <p><strong>Copy the new client secret now. It is shown once.</strong></p><p class="secret" id="client_secret">${r.clientSecret}</p>
            <p><a href="/dashboard/oauth-apps">Back to OAuth apps</a></p>`,
        );
      }, () => sentAgain(reply, s, 'the secret was rotated', OAUTH_APPS));
    } catch (error) {
      if (error instanceof OAuthClientRuleError) return oauthAppsPage(reply, s, error.message, error.reason === 'not_found' ? 404 : 409);
      throw error;
    }
  });

  app.post('/dashboard/oauth-apps/:clientId/delete', async function deleteOAuthApp(request: FastifyRequest<{ Params: { clientId: string } }>, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return forbidden(reply, s);
    try {
      const r = await deleteOAuthClientAndSweep(actingFor(app, request), { clientId: request.params.clientId, teamId: s.user.teamId, userId: s.user.id }, waitForWrite);
      await waitForWrite(r.position);
      return reply.redirect('/dashboard/oauth-apps', 303);
    } catch (error) {
      if (error instanceof OAuthClientRuleError) return oauthAppsPage(reply, s, error.message, error.reason === 'not_found' ? 404 : 409);
      throw error;
    }
  });

  connectedAppRoutes(app, { forbidden, canManage }, oauthAppsPage);

  // ---- API keys ----
  const apiKeysPage = async (reply: FastifyReply, s: SignedIn, error?: string, status = 200, typed?: Typed) => {
    const keys = await listApiKeysOfTeam(app.readModels, s.user.teamId);
    const teamSites = await sites(s);
    const rows = keys.map(
      (k) => html`<tr><td>${k.name}</td><td>${k.scopes.join(' ')}</td><td>${k.siteId ? (teamSites.find((x) => x.id === k.siteId)?.domain ?? k.siteId) : 'all sites'}</td>
        <td>${k.createdAt}</td><td>${k.lastUsedAt ?? 'never'}</td><td>${k.revoked ? `revoked ${k.revokedAt ?? ''}` : 'active'}</td>
        <td>${!k.revoked && canManage(s) ? html`<form method="post" action="/dashboard/api-keys/${k.id}/revoke"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit">Revoke ${k.name}</button></form>` : ''}</td></tr>`,
    );
    return show(
      reply,
      s,
      'API keys',
      html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}
        ${keys.length ? html`<table><thead><tr><th>Name</th><th>Scopes</th><th>Site</th><th>Created</th><th>Last used</th><th>Status</th><th></th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>No API keys yet.</p>`}
        ${
          canManage(s)
            ? html`<h2>Create a key</h2><form method="post" action="/dashboard/api-keys">
              <input type="hidden" name="csrf" value="${s.csrf}">${onceField()}
              <label for="key_name">Name</label><input id="key_name" name="name" type="text" maxlength="120" required value="${typed?.text('name') ?? ''}">
              <fieldset><legend>Scopes</legend>${SCOPES.map((sc) => html`<label><input type="checkbox" name="scopes" value="${sc}" ${typed?.list('scopes').includes(sc) ? html`checked` : ''}> <code>${sc}</code>: ${SCOPE_DESCRIPTIONS[sc]}</label>`)}</fieldset>
              <label for="site">Site</label><select id="site" name="site_id"><option value="">All sites of the team</option>${teamSites.map((x) => html`<option value="${x.id}" ${typed?.text('site_id') === x.id ? html`selected` : ''}>${x.domain} (${x.id})</option>`)}</select>
              <button type="submit">Create key</button></form>`
            : ''
        }`,
      status,
    );
  };

  app.get('/dashboard/api-keys', async function listApiKeys(request, reply) {
    return apiKeysPage(reply, request.dashboard!);
  });

  app.post('/dashboard/api-keys', async function createApiKeyForm(request, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return forbidden(reply, s);
    const form = parseForm(apiKeyForm, request.body);
    if (!form.success) return apiKeysPage(reply, s, firstProblem(form.error), 400, typedIn(request.body));
    const { name, scopes, site_id: siteId } = form.data;
    if (siteId && !(await sites(s)).some((x) => x.id === siteId)) return apiKeysPage(reply, s, 'Unknown site.', 400, typedIn(request.body));
    const again = () => sentAgain(reply, s, 'the key was created', { href: '/dashboard/api-keys', label: 'Back to API keys' });
    return onFirstSending(app, s, request.body, async () => {
      const r = await createApiKey(actingFor(app, request), { teamId: s.user.teamId, name, scopes, siteId });
      await waitForWrite(r.position, 'answer');
      return show(
        reply,
        s,
        'API key created',
        html`<p><strong>Copy the key now. It is shown once and cannot be retrieved later.</strong></p><p class="secret" id="api_key">${r.key}</p>
          <p><a href="/dashboard/api-keys">Back to API keys</a></p>`,
        201,
      );
    }, again);
  });

  app.post('/dashboard/api-keys/:id/revoke', async function revokeApiKeyForm(request: FastifyRequest<{ Params: { id: string } }>, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return forbidden(reply, s);
    const key = await getApiKey(app.readModels, request.params.id);
    if (!key || key.teamId !== s.user.teamId) return apiKeysPage(reply, s, 'API key not found.', 404);
    try {
      const r = await revokeApiKey(actingFor(app, request), { apiKeyId: key.id });
      await waitForWrite(r.position);
    } catch (error) {
      if (!(error instanceof TenancyError)) throw error;
    }
    return reply.redirect('/dashboard/api-keys', 303);
  });

  // ---- Webhook subscriptions per site ----
  await webhookPages(app, { show, forbidden, canManage, sites });

  await app.register(inboxPages);

  // ---- Agents per site ----
  agentPages(app, show, canManage);

  // ---- The team's people, one's own password ----
  await teamPages(app);
}
