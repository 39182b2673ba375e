import type { EventStore } from '../ports/eventStore.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';
import type { SecretBox } from '../ports/secretBox.ts';
import { subscriptionStream } from '../domain/webhookSubscription.ts';
import { WEBHOOK_SUBSCRIPTIONS, type WebhookSubscriptionDoc } from '../readModels/webhookSubscriptions.ts';
import { StartupError } from './startupFailure.ts';

/**
 * The secret key must open what it sealed. A lost `secret.key` is created anew at start, and a
 * `SECRET_KEY` can differ from the file: either way the webhook signing secrets in the log become
 * unreadable, deliveries retry forever with a decryption error, and new secrets get sealed under the
 * other key. Checked on the latest sealed secret of every subscription the read models list, so the
 * start refuses with the cause instead. (Read models still empty, e.g. before their first rebuild,
 * list none: nothing is checked then.)
 */
export async function assertSecretKeyOpens(deps: { events: EventStore; readModels: ReadModelStore; secrets: SecretBox }, keySource: string): Promise<void> {
  const unreadable: string[] = [];
  let checked = 0;
  for (const subscription of await deps.readModels.find<WebhookSubscriptionDoc>(WEBHOOK_SUBSCRIPTIONS, {})) {
    const history = await deps.events.readStream(subscriptionStream(subscription.id));
    const sealed = history
      .map((e) => (e.data as { sealedSecret?: unknown }).sealedSecret)
      .filter((s): s is string => typeof s === 'string')
      .at(-1);
    if (sealed === undefined) continue;
    checked++;
    try {
      deps.secrets.open(sealed);
    } catch {
      unreadable.push(subscription.id);
    }
  }
  if (unreadable.length === 0) return;
  const which = unreadable.length === checked ? 'any of the' : `${unreadable.length} of the ${checked}`;
  throw new StartupError(
    `${keySource} does not open ${which} webhook signing secrets sealed in the event log (subscriptions ${unreadable.slice(0, 5).join(', ')}${unreadable.length > 5 ? ', …' : ''}): it is not the key they were sealed with (a lost or replaced secret.key, or a SECRET_KEY that differs from it). Restore the original key; if it is lost for good, start with SECRET_KEY_CHECK=false and rotate those subscriptions' secrets with a grace of 0.`,
  );
}
