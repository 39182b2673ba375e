import type { WebhookEventType } from '../domain/eventCatalog.ts';
import { notFound } from '../domain/errors.ts';
import { SubscriptionRuleError, subscriptionStream, webhookSubscriptionDecider } from '../domain/webhookSubscription.ts';
import type { WebhookSubscriptionDoc } from '../readModels/webhookSubscriptions.ts';
import type { CommandContext } from './context.ts';
import { generateWebhookSecret } from './credentials.ts';
import { handleCommand } from './handleCommand.ts';

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

export async function createSubscription(ctx: CommandContext, input: CreateSubscriptionInput) {
  const subscriptionId = ctx.newId();
  const secret = generateWebhookSecret();
  const now = ctx.clock.now().toISOString();
  const secretPrefix = `${secret.slice(0, SECRET_PREFIX_LENGTH)}…`;
  const { position } = await handleCommand(ctx.events, subscriptionStream(subscriptionId), webhookSubscriptionDecider, {
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
  const subscription: WebhookSubscriptionDoc = {
    id: subscriptionId,
    team_id: input.teamId,
    site_id: input.siteId,
    label: input.label,
    url: input.url,
    secret_prefix: secretPrefix,
    event_types: [...new Set(input.eventTypes)],
    is_active: true,
    consecutive_failures: 0,
    created_by_oauth_client_id: input.createdByOauthClientId,
    created_at: now,
    updated_at: now,
    last_delivery_at: null,
    last_delivery_status: null,
  };
  return { subscription, secret, position };
}

export async function deleteSubscription(ctx: CommandContext, input: { siteId: string; subscriptionId: string }) {
  try {
    const { position } = await handleCommand(ctx.events, subscriptionStream(input.subscriptionId), webhookSubscriptionDecider, {
      type: 'DeleteSubscription',
      data: { ...input, now: ctx.clock.now().toISOString() },
    });
    return { position };
  } catch (error) {
    if (error instanceof SubscriptionRuleError) throw notFound('Webhook subscription not found.');
    throw error;
  }
}
