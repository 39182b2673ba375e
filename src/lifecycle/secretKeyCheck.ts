import { aggregateStream } from '../commands/aggregateStream.ts';
import type { Config } from '../config.ts';
import { subscriptionStream, webhookSubscriptionDecider } from '../domain/webhookSubscription.ts';
import { mapLimit } from '../lib/mapLimit.ts';
import type { EventStore } from '../ports/eventStore.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';
import type { SecretBox } from '../ports/secretBox.ts';
import { webhookSubscriptionsProjection } from '../projections/webhookSubscriptions.ts';
import { WEBHOOK_SUBSCRIPTIONS, type WebhookSubscriptionDoc } from '../readModels/webhookSubscriptions.ts';
import { secretKeyFile } from '../services.ts';
import { StartupError } from './startupFailure.ts';

/**
 * The secret key must open what it sealed. A lost `secret.key` is created anew at start, and a
 * `SECRET_KEY` can differ from the file: either way the webhook signing secrets in the log become
 * unreadable, deliveries retry forever with a decryption error, and new secrets get sealed under the
 * other key. Checked on the current sealed secret of every subscription the read models list, so the
 * start refuses with the cause instead. When the subscriptions' read model is not built (before its
 * first rebuild: a new read-model database, a deleted readmodels.sqlite, a new projection version),
 * the subscriptions are found in the log itself, read once from the start. `SECRET_KEY_CHECK=false` skips it, for a key lost for good.
 */
export async function assertSecretKeyOpens(deps: { config: Config; events: EventStore; readModels: ReadModelStore; secrets: SecretBox }): Promise<void> {
  if (!deps.config.SECRET_KEY_CHECK) return;
  const subscriptions = (await readModelIsBuilt(deps.readModels))
    ? (await deps.readModels.find<WebhookSubscriptionDoc>(WEBHOOK_SUBSCRIPTIONS, {})).map((s) => s.id)
    : await subscriptionsInLog(deps.events);
  const opens = await mapLimit(subscriptions, 8, async (id) => {
    const { state } = await aggregateStream(deps.events, subscriptionStream(id), webhookSubscriptionDecider);
    // A deleted subscription delivers nothing; its projection removes it, so both paths pass over it.
    if (state.status !== 'active') return true;
    try {
      deps.secrets.open(state.sealedSecret);
      return true;
    } catch {
      return false;
    }
  });
  const unreadable = subscriptions.filter((_, i) => !opens[i]);
  if (unreadable.length === 0) return;
  const checked = opens.length;
  const which = unreadable.length === checked ? 'any of the' : `${unreadable.length} of the ${checked}`;
  const keySource = deps.config.SECRET_KEY ? 'SECRET_KEY' : secretKeyFile(deps.config);
  throw new StartupError(
    `${keySource} does not open ${which} webhook signing secrets sealed in the event log (subscriptions ${unreadable.slice(0, 5).join(', ')}${unreadable.length > 5 ? ', …' : ''}): it is not the key they were sealed with (a lost or replaced secret.key, or a SECRET_KEY that differs from it). Restore the original key; if it is lost for good, start with SECRET_KEY_CHECK=false and rotate those subscriptions' secrets with a grace of 0.`,
  );
}

/**
 * The subscriptions' read model has been built at its current version (what it lists is then the log's
 * subscriptions up to its checkpoint, which trails the head by at most the latest few). Otherwise it
 * waits for a rebuild and may list none.
 */
async function readModelIsBuilt(readModels: ReadModelStore): Promise<boolean> {
  const checkpoint = await readModels.getCheckpoint(webhookSubscriptionsProjection.name);
  return checkpoint !== null && checkpoint.version === webhookSubscriptionsProjection.version;
}

/** Every subscription ever created, from the whole log (the caller passes over the deleted ones). */
async function subscriptionsInLog(events: EventStore): Promise<string[]> {
  const ids: string[] = [];
  for (let after = -1n; ; ) {
    const page = await events.readAll({ after, limit: 5_000 });
    if (page.length === 0) return ids;
    for (const event of page) if (event.type === 'SubscriptionCreated') ids.push((event.data as { subscriptionId: string }).subscriptionId);
    after = page[page.length - 1]!.position;
  }
}
