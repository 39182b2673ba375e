import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { revokeGrant } from '../../commands/oauth.ts';
import { getOAuthClient } from '../../readModels/oauthClients.ts';
import { getOAuthGrant, listActiveGrantsOfTeam } from '../../readModels/oauthGrants.ts';
import { getUser } from '../../readModels/users.ts';
import { type SafeHtml, html } from '../web/html.ts';
import type { SignedIn } from '../web/session.ts';
import type { DashboardKit } from './webhooks.ts';
import { actingFor } from '../actingFor.ts';
import { standsBehindApps } from '../../domain/team.ts';
import { deleteAppSubscriptions } from '../../commands/teamUsers.ts';
import { subscriptionsOfGrants } from '../../readModels/userHoldings.ts';

/**
 * The apps the team's people authorized: every grant of the team still in force, whichever team
 * registered the app (a self-registered MCP client belongs to none). Revoking one ends its access and
 * refresh tokens at once, and deletes the webhook subscriptions the app made with it, as deleting a
 * client does for the apps the team registered itself.
 */
export async function connectedAppsSection(app: FastifyInstance, s: SignedIn, canManage: boolean): Promise<SafeHtml> {
  const grants = await listActiveGrantsOfTeam(app.readModels, s.user.teamId, app.clock.now());
  if (grants.length === 0) return html`<h2>Connected apps</h2><p>No app has access to this team.</p>`;
  const rows = await Promise.all(
    grants.map(async (g) => {
      const client = await getOAuthClient(app.readModels, g.clientId);
      const by = await getUser(app.readModels, g.userId);
      const name = client?.name ?? g.clientId;
      // Its tokens are refused once the person who authorized it left or became a member (until then it is not yet revoked).
      const inForce = standsBehindApps(by, g.teamId);
      const who = by && by.teamId === g.teamId ? by.email : g.userId;
      return html`<tr><td>${name}</td><td><code>${g.clientId}</code></td><td>${who}${inForce ? '' : html` <strong>(no longer an owner or admin of the team: the app's access is refused)</strong>`}</td><td>${g.scopes.join(' ')}</td><td>${g.siteIds.length}</td><td>${g.createdAt}</td>
        <td>${canManage ? html`<form method="post" action="/dashboard/oauth-apps/grants/${g.id}/revoke"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit">Revoke access of ${name}</button></form>` : ''}</td></tr>`;
    }),
  );
  return html`<h2>Connected apps</h2>
    <table><thead><tr><th>App</th><th>client_id</th><th>Authorized by</th><th>Scopes</th><th>Sites</th><th>Since</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function connectedAppRoutes(app: FastifyInstance, kit: Pick<DashboardKit, 'forbidden' | 'canManage'>, oauthAppsPage: (reply: FastifyReply, s: SignedIn, error: string, status: number) => Promise<FastifyReply>) {
  app.post('/dashboard/oauth-apps/grants/:grantId/revoke', async function revokeConnectedApp(request: FastifyRequest<{ Params: { grantId: string } }>, reply) {
    const s = request.dashboard!;
    if (!kit.canManage(s)) return kit.forbidden(reply, s);
    const grant = await getOAuthGrant(app.readModels, request.params.grantId);
    // Another team's grant is answered as a missing one.
    if (!grant || grant.teamId !== s.user.teamId) return oauthAppsPage(reply, s, 'No such connected app.', 404);
    // Read before the revocation: the subscriptions made with this grant's tokens.
    const madeWithIt = await subscriptionsOfGrants(app, s.user.teamId, [grant.id], app.clock.now());
    const acting = actingFor(app, request);
    const r = await revokeGrant(acting, grant.id, 'revoked_by_team');
    const swept = await deleteAppSubscriptions(acting, madeWithIt, { reason: 'revoked_by_team', grantId: grant.id });
    const position = swept ?? r.position;
    if (position !== null) await app.waitForWrite(position);
    return reply.redirect('/dashboard/oauth-apps', 303);
  });
}
