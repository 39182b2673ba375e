import type { FastifyInstance } from 'fastify';
import { revokeIfAuthorizerGone } from '../../commands/oauth.ts';
import { deleteAppSubscriptions } from '../../commands/teamUsers.ts';
import type { AuthorizerGone } from '../../domain/team.ts';
import { subscriptionsOfGrants } from '../../readModels/userHoldings.ts';

type App = Pick<FastifyInstance, 'events' | 'readModels' | 'clock' | 'secrets' | 'newId'>;

/**
 * The webhook subscriptions made with the tokens of a grant just revoked because its authorizer left
 * the team or became a member, found at the app's next use (the token endpoint, a bearer call) after
 * the removal's own sweep missed it: they are deleted, so nothing of the team flows to the app any more.
 */
export async function deleteSubscriptionsOfDepartedGrant(app: App, grant: { id: string; teamId: string }, reason: AuthorizerGone): Promise<bigint | null> {
  return deleteAppSubscriptions(app, await subscriptionsOfGrants(app, grant.teamId, [grant.id], app.clock.now()), { reason, grantId: grant.id });
}

/** For the bearer resolver: the grant is revoked (on its and the team's streams) and its subscriptions deleted, when its authorizer is gone. */
export async function disconnectIfAuthorizerGone(app: App, grantId: string): Promise<void> {
  const gone = await revokeIfAuthorizerGone(app, grantId);
  if (gone) await deleteSubscriptionsOfDepartedGrant(app, { id: grantId, teamId: gone.teamId }, gone.reason);
}
