import type { WebhookEventType } from '../domain/eventCatalog.ts';
import type { GrantRevocationReason } from '../domain/oauthGrant.ts';
import { conflict, notFound, validationError } from '../domain/errors.ts';
import {
  type SubscriptionChanges,
  SubscriptionRuleError,
  type WebhookSubscriptionEvent,
  subscriptionStream,
  webhookSubscriptionDecider,
} from '../domain/webhookSubscription.ts';
import type { CommandContext } from './context.ts';
import { generateWebhookSecret } from './credentials.ts';
import { handleCommand } from './handleCommand.ts';

type SubscriptionCreated = Extract<WebhookSubscriptionEvent, { type: 'SubscriptionCreated' }>;

/** How much of the secret `secret_prefix` shows before the ellipsis: the prefix plus four characters. */
const SECRET_PREFIX_LENGTH = 'svc_wh_'.length + 4;

export interface CreateSubscriptionInput {
  teamId: string;
  siteId: string;
  label: string;
  url: string;
  eventTypes: WebhookEventType[];
  createdByOauthClientId: string | null;
}

const secretPrefixOf = (secret: string) => `${secret.slice(0, SECRET_PREFIX_LENGTH)}…`;

function asServiceError(error: unknown): unknown {
  if (!(error instanceof SubscriptionRuleError)) return error;
  if (error.reason === 'invalid_grace') return validationError(error.message);
  if (error.reason === 'grace_running') return conflict(error.message);
  return notFound('Webhook subscription not found.');
}

/**
 * Registers a subscription. Returns the SubscriptionCreated facts (the read model maps them to the
 * subscription document) and the signing secret, which is never shown again.
 */
export async function createSubscription(ctx: CommandContext, input: CreateSubscriptionInput) {
  const subscriptionId = ctx.newId();
  const secret = generateWebhookSecret();
  const now = ctx.clock.now().toISOString();
  const secretPrefix = secretPrefixOf(secret);
  const { events, position } = await handleCommand(ctx, subscriptionStream(subscriptionId), webhookSubscriptionDecider, {
    type: 'CreateSubscription',
    data: {
      subscriptionId,
      ...input,
      eventTypes: [...new Set(input.eventTypes)],
      secretPrefix,
      sealedSecret: ctx.secrets.seal(secret),
      now,
    },
  });
  const created = events.find((e): e is SubscriptionCreated => e.type === 'SubscriptionCreated')!.data;
  return { subscriptionId, created, secret, position };
}

/**
 * Why the service deleted a subscription nobody asked it to delete: its app lost its access (the
 * grant's revocation reason) or its client was deleted (`client_deleted`), with the id of the grant,
 * the person or the client that set it off. Recorded as `cause` in `SubscriptionDeleted`'s metadata.
 */
export interface SubscriptionDeletionCause {
  reason: Extract<GrantRevocationReason, 'client_deleted' | 'revoked_by_team' | 'user_removed' | 'user_demoted'>;
  grantId?: string;
  userId?: string;
  clientId?: string;
}

export async function deleteSubscription(ctx: CommandContext, input: { siteId: string; subscriptionId: string }, cause?: SubscriptionDeletionCause) {
  try {
    const { position } = await handleCommand(
      ctx,
      subscriptionStream(input.subscriptionId),
      webhookSubscriptionDecider,
      { type: 'DeleteSubscription', data: { ...input, now: ctx.clock.now().toISOString() } },
      cause ? { cause } : {},
    );
    return { position };
  } catch (error) {
    throw asServiceError(error);
  }
}

/** Changes label, url or event types (the caller has checked the url as for a creation). Returns the write's position; when nothing changed, the position of the subscription's last event (see CommandResult). */
export async function updateSubscription(ctx: CommandContext, input: { siteId: string; subscriptionId: string; changes: SubscriptionChanges }) {
  try {
    const { position } = await handleCommand(ctx, subscriptionStream(input.subscriptionId), webhookSubscriptionDecider, {
      type: 'UpdateSubscription',
      data: { ...input, now: ctx.clock.now().toISOString() },
    });
    return { position };
  } catch (error) {
    throw asServiceError(error);
  }
}

/**
 * A new signing secret, returned once and stored sealed like the first one. For `graceSeconds`
 * (0 to 86400) the previous secret keeps signing too: deliveries carry a `v1=` for each.
 */
export async function rotateSubscriptionSecret(ctx: CommandContext, input: { siteId: string; subscriptionId: string; graceSeconds: number }) {
  const secret = generateWebhookSecret();
  try {
    const { events, position } = await handleCommand(ctx, subscriptionStream(input.subscriptionId), webhookSubscriptionDecider, {
      type: 'RotateSubscriptionSecret',
      data: { ...input, secretPrefix: secretPrefixOf(secret), sealedSecret: ctx.secrets.seal(secret), now: ctx.clock.now().toISOString() },
    });
    const rotated = events.find((e): e is Extract<WebhookSubscriptionEvent, { type: 'SubscriptionSecretRotated' }> => e.type === 'SubscriptionSecretRotated')!.data;
    return { secret, secretPrefix: rotated.secretPrefix, rotatedAt: rotated.rotatedAt, previousSecretExpiresAt: rotated.previousSecretExpiresAt, position };
  } catch (error) {
    throw asServiceError(error);
  }
}
