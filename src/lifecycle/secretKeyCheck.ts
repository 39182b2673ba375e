import type { EventStore } from '../ports/eventStore.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';
import type { SecretBox } from '../ports/secretBox.ts';
import { subscriptionStream } from '../domain/webhookSubscription.ts';
import { WEBHOOK_SUBSCRIPTIONS, type WebhookSubscriptionDoc } from '../readModels/webhookSubscriptions.ts';
import { StartupError } from './startupFailure.ts';

/**
 * The secret key must open what it sealed. A lost `secret.key` is created anew at start, and a
 * `SECRET_KEY` can differ from the file: either way every webhook signing secret in the log becomes
 * unreadable, and deliveries would retry forever with a decryption error. Checked on one sealed
 * secret (the latest of one subscription), so the start refuses with the cause instead.
 */
export async function assertSecretKeyOpens(deps: { events: EventStore; readModels: ReadModelStore; secrets: SecretBox }, keySource: string): Promise<void> {
  const [subscription] = await deps.readModels.find<WebhookSubscriptionDoc>(WEBHOOK_SUBSCRIPTIONS, {}, { limit: 1 });
  if (!subscription) return;
  const history = await deps.events.readStream(subscriptionStream(subscription.id));
  const sealed = history
    .map((e) => (e.data as { sealedSecret?: unknown }).sealedSecret)
    .filter((s): s is string => typeof s === 'string')
    .at(-1);
  if (sealed === undefined) return;
  try {
    deps.secrets.open(sealed);
  } catch {
    throw new StartupError(
      `${keySource} does not open the webhook signing secrets sealed in the event log: it is not the key they were sealed with (a lost or replaced secret.key, or a SECRET_KEY that differs from it). Restore the original key.`,
    );
  }
}
