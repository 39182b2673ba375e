import { revokeIfAuthorizerGone, sweepDeletedOAuthClient } from '../../commands/oauth.ts';
import { deleteAppSubscriptions } from '../../commands/teamUsers.ts';
import type { SubscriptionDeletionCause } from '../../commands/webhookSubscriptions.ts';
import type { CommandContext } from '../../commands/context.ts';
import { aggregateStreamCached } from '../../commands/aggregateStream.ts';
import { appAuthorizerGone, canAuthorizeApps, teamDecider, teamStream } from '../../domain/team.ts';
import { type EventSchemas, oauthClientEventSchemas, oauthGrantEventSchemas, teamEventSchemas } from '../../domain/eventSchemas.ts';
import type { OAuthClientEvent } from '../../domain/oauthClient.ts';
import type { OAuthGrantEvent } from '../../domain/oauthGrant.ts';
import type { TeamEvent } from '../../domain/team.ts';
import { parseEvent } from '../../lib/parseEvent.ts';
import { followLog, readPageOfTypes } from '../../lib/followLog.ts';
import { LazyCheckpoint, type StoreOutcome } from '../../lib/lazyCheckpoint.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import type { ProjectionRunner } from '../../projections/projectionRunner.ts';
import { grantsGivenBy, holdingsOfClient, subscriptionsOfGrants } from '../../readModels/userHoldings.ts';

type FollowedEvent =
  | Extract<TeamEvent, { type: 'UserRemoved' | 'UserRoleChanged' }>
  | Extract<OAuthGrantEvent, { type: 'GrantRevoked' }>
  | Extract<OAuthClientEvent, { type: 'OAuthClientDeleted' }>;
const followedSchemas: EventSchemas<FollowedEvent> = {
  UserRemoved: teamEventSchemas.UserRemoved,
  UserRoleChanged: teamEventSchemas.UserRoleChanged,
  GrantRevoked: oauthGrantEventSchemas.GrantRevoked,
  OAuthClientDeleted: oauthClientEventSchemas.OAuthClientDeleted,
};

const FOLLOWED_TYPES = Object.keys(followedSchemas);

/** Revocations whose app's webhook subscriptions go with it (an app revoking its own tokens, or a replayed code, keeps them). */
type SweptReason = Exclude<SubscriptionDeletionCause['reason'], 'client_deleted'>;
const SWEPT_REASONS: ReadonlySet<string> = new Set<SweptReason>(['revoked_by_team', 'user_removed', 'user_demoted']);
const swept = (reason: string): reason is SweptReason => SWEPT_REASONS.has(reason);

function mustAct(event: FollowedEvent): boolean {
  switch (event.type) {
    case 'UserRemoved':
    case 'OAuthClientDeleted':
      return true;
    case 'UserRoleChanged':
      return !canAuthorizeApps(event.data.role);
    case 'GrantRevoked':
      return swept(event.data.reason);
  }
}

export const DEPARTED_APPS = 'departedApps';
const VERSION = 1;
const PAGE = 500;
const READ_MODELS_WAIT_MS = 5_000;
/** The projections whose read models the sweep reads: grants and tokens, users, sites, subscriptions. */
const READ_MODELS = ['oauth', 'teams', 'sites', 'webhookSubscriptions'];

export interface DepartedAppsDeps extends CommandContext {
  readModels: ReadModelStore;
  /** The read models this reads (grants, tokens, sites, subscriptions) must include the event first. */
  projections: Pick<ProjectionRunner, 'waitFor'>;
  log?: { error(obj: unknown, msg?: string): void };
}

/**
 * The durable side of disconnecting apps: those of a person who left a team or became a member, one
 * the team revoked, one deleted. The dashboard, the CLI and the token endpoint revoke the grants and
 * delete the webhook subscriptions made with them at once, in several appends; a crash or a store
 * error between them used to leave subscriptions that went on sending the team's events to an app
 * nobody stands behind. This follows
 * the log from its own checkpoint, which moves past an event only once it is handled:
 *  - a person removed or made a member: each grant they gave that still stands is revoked
 *    (revokeIfAuthorizerGone, decided on the streams), and the subscriptions made with any grant they
 *    gave are deleted while they are still gone;
 *  - a grant revoked by the team or with its authorizer's departure: the subscriptions made with its
 *    tokens are deleted;
 *  - a client deleted: its grants are revoked and the subscriptions it made deleted.
 * Each is a no-op where the request already did it.
 */
export class DepartedApps {
  /** Handled up to `position`; stored behind it only by pages of events it had nothing to do for. */
  private readonly cp: LazyCheckpoint;

  constructor(private readonly deps: DepartedAppsDeps) {
    this.cp = new LazyCheckpoint(deps.readModels, DEPARTED_APPS, VERSION);
  }

  get checkpoint(): bigint {
    return this.cp.position;
  }

  /**
   * Its stored checkpoint. The first start begins at the head: what came before was swept by the
   * requests themselves, and the sweep's rule applied again today to every past revocation could
   * take the subscriptions of apps whose other grants have since expired, all at once at the upgrade.
   */
  async loadState(): Promise<void> {
    const stored = await this.deps.readModels.getCheckpoint(DEPARTED_APPS);
    if (stored && stored.version === VERSION) {
      this.cp.at(stored.position);
      return;
    }
    this.cp.at(stored?.position ?? -1n);
    this.cp.movedTo(await this.deps.events.headPosition());
    await this.storeCheckpoint();
  }

  loop(signal: AbortSignal): Promise<void> {
    return followLog(this.deps.events, { position: () => this.cp.position, step: (s) => this.handlePage(s) }, signal, (error) =>
      this.deps.log?.error({ err: error }, 'disconnecting the apps of departed people failed; retrying'),
    );
  }

  /** The events of its types in one page of the global log. Returns false when there was nothing new. */
  async handlePage(signal?: AbortSignal): Promise<boolean> {
    const from = this.cp.position;
    const { page, to } = await readPageOfTypes(this.deps.events, from, PAGE, FOLLOWED_TYPES);
    if (to <= from) {
      await this.settle(await this.cp.idle());
      return false;
    }
    let acted = false;
    for (const recorded of page) {
      const event = parseEvent(recorded, followedSchemas);
      if (!event || !mustAct(event)) continue;
      // Stopping: the rest of the page is read again at the next start.
      if (signal?.aborted) return true;
      if (!(await this.deps.projections.waitFor(recorded.position, READ_MODELS_WAIT_MS, READ_MODELS))) {
        throw new Error(`the read models did not reach position ${recorded.position} in ${READ_MODELS_WAIT_MS} ms`);
      }
      await this.handle(event);
      acted = true;
    }
    // Stored after acting; a page it had nothing to do for moves it in memory (LazyCheckpoint: a
    // page of other events read again after a crash costs a read, while a commit per page would add
    // one to every ingestion's).
    if (!acted) {
      await this.settle(await this.cp.passed(to));
      return true;
    }
    this.cp.movedTo(to);
    await this.storeCheckpoint();
    return true;
  }

  /** Stores where it is (also when the worker stops). */
  async storeCheckpoint(): Promise<void> {
    await this.settle(await this.cp.store());
  }

  /** Another copy that moved the stored checkpoint first is followed from there. */
  private async settle(outcome: StoreOutcome): Promise<void> {
    if (outcome === 'lost') await this.cp.reload();
  }

  private async handle(event: FollowedEvent): Promise<void> {
    const { deps } = this;
    const now = deps.clock.now();
    if (event.type === 'OAuthClientDeleted') {
      await sweepDeletedOAuthClient(deps, event.data.clientId, await holdingsOfClient(deps.readModels, event.data.clientId));
      return;
    }
    if (event.type === 'GrantRevoked') {
      const { grantId, teamId, reason } = event.data;
      if (swept(reason)) await deleteAppSubscriptions(deps, await subscriptionsOfGrants(deps, teamId, [grantId], now), { reason, grantId });
      return;
    }
    const user = { id: event.data.userId, teamId: event.data.teamId };
    const grantIds = await grantsGivenBy(deps.readModels, user);
    for (const grantId of grantIds) await revokeIfAuthorizerGone(deps, grantId);
    // A grant the app revoked itself (or one revoked for a replayed code) gets no GrantRevoked more:
    // its subscriptions go with the person here, unless they are back as an owner or admin.
    const { state: team } = await aggregateStreamCached(deps.events, teamStream(user.teamId), teamDecider);
    const gone = appAuthorizerGone(team, user.id);
    if (gone) await deleteAppSubscriptions(deps, await subscriptionsOfGrants(deps, user.teamId, grantIds, now), { reason: gone, userId: user.id });
  }
}
