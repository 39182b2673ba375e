import type { WebhookEventType } from '../domain/eventCatalog.ts';
import { notFound } from '../domain/errors.ts';
import {
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

/**
 * Registers a subscription. Returns the SubscriptionCreated facts (the read model maps them to the
 * subscription document) and the signing secret, which is never shown again.
 */
export async function createSubscription(ctx: CommandContext, input: CreateSubscriptionInput) {
  const subscriptionId = ctx.newId();
  const secret = generateWebhookSecret();
  const now = ctx.clock.now().toISOString();
  const secretPrefix = `${secret.slice(0, SECRET_PREFIX_LENGTH)}…`;
  const { events, position } = await handleCommand(ctx.events, subscriptionStream(subscriptionId), webhookSubscriptionDecider, {
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
