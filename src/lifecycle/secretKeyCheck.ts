import { hostname } from 'node:os';
import { aggregateStream } from '../commands/aggregateStream.ts';
import type { Config } from '../config.ts';
import { bouncedMessageId } from '../domain/bounceAddress.ts';
import { SECRET_KEY_PROBE, SECRET_KEY_STREAM, keyOpensProbe } from '../domain/secretKey.ts';
import { secretKeyEventSchemas } from '../domain/eventSchemas.ts';
import { subscriptionStream, webhookSubscriptionDecider } from '../domain/webhookSubscription.ts';
import { eventsOfTypes } from '../lib/eventsOfTypes.ts';
import { parseEvent } from '../lib/parseEvent.ts';
import { mapLimit } from '../lib/mapLimit.ts';
import { type EventStore, type RecordedEvent, WrongExpectedRevisionError } from '../ports/eventStore.ts';
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
 * the subscriptions are found in the log itself, read once from the start. First, the key must open
 * the log's key probe (src/domain/secretKey.ts), which holds even while no subscription exists; the
 * first start whose key opens the subscriptions' secrets records it. `SECRET_KEY_CHECK=false` skips
 * both, for a key lost for good; it records a probe under the new key only once that key opens every
 * subscription's secret (after they were rotated), so later starts check against that one.
 */
export async function assertSecretKeyOpens(deps: { config: Config; events: EventStore; readModels: ReadModelStore; secrets: SecretBox; clock: { now(): Date } }): Promise<void> {
  const read = await readKeyProbe(deps);
  if (deps.config.SECRET_KEY_CHECK && read.probe && !read.opens) throw probeRefused(deps.config, read.probe, read.last);
  const subscriptions = (await readModelIsBuilt(deps.readModels))
    ? (await deps.readModels.find<WebhookSubscriptionDoc>(WEBHOOK_SUBSCRIPTIONS, {})).map((s) => s.id)
    : await subscriptionsInLog(deps.events);
  const sealedOpen = await mapLimit(subscriptions, 8, async (id) => {
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
  const unreadable = subscriptions.filter((_, i) => !sealedOpen[i]);
  // Only a key that opened what the log holds is recorded as the log's key (with SECRET_KEY_CHECK=false
  // too: a new key is taken once the subscriptions' secrets were rotated under it).
  if (unreadable.length === 0) {
    if (!read.probe && deps.config.SECRET_KEY_CHECK) await assertKeyTaggedLastMail(deps);
    return recordKeyProbe(deps, read);
  }
  if (!deps.config.SECRET_KEY_CHECK) return;
  const checked = sealedOpen.length;
  const which = unreadable.length === checked ? 'any of the' : `${unreadable.length} of the ${checked}`;
  throw new StartupError(
    `${keySourceOf(deps.config)} does not open ${which} webhook signing secrets sealed in the event log (subscriptions ${unreadable.slice(0, 5).join(', ')}${unreadable.length > 5 ? ', …' : ''}): it is not the key they were sealed with (a lost or replaced secret.key, or a SECRET_KEY that differs from it). Restore the original key; if it is lost for good, start with SECRET_KEY_CHECK=false and rotate those subscriptions' secrets with a grace of 0.`,
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
  for await (const event of eventsOfTypes(events, ['SubscriptionCreated'])) ids.push((event.data as { subscriptionId: string }).subscriptionId);
  return ids;
}

/**
 * A log older than the probe (the first start after an upgrade) is not new: before its probe is
 * recorded, the key must be the one that made the bounce address of the latest mail drafted in it
 * (its tag is an HMAC under the key), so a process with a regenerated key that happens to start first
 * does not take the log as its own. Read once per log, from the start; a log with no mail passes.
 */
async function assertKeyTaggedLastMail(deps: { config: Config; events: EventStore; secrets: SecretBox }): Promise<void> {
  const last = await lastBounceAddressInLog(deps.events);
  if (!last) return;
  const domain = last.returnPath.slice(last.returnPath.lastIndexOf('@') + 1);
  if (bouncedMessageId(deps.secrets, last.returnPath, domain) === last.messageId.toUpperCase()) return;
  throw new StartupError(
    `${keySourceOf(deps.config)} did not make the bounce address of the latest mail in the event log (message ${last.messageId}, drafted ${new Date(last.at).toISOString()}): it is not the key the service has been using (a lost or replaced secret.key, or a SECRET_KEY that differs from the other processes'). Restore the original key; if it is lost for good, start once with SECRET_KEY_CHECK=false: that start records the new key as the log's key, and bounces of mails sent before it are no longer recognised.`,
  );
}

async function lastBounceAddressInLog(events: EventStore): Promise<{ messageId: string; returnPath: string; at: number } | null> {
  let last: { messageId: string; returnPath: string; at: number } | null = null;
  for await (const event of eventsOfTypes(events, ['ReplyDrafted'])) {
    const data = event.data as { messageId: string; returnPath: string | null; occurredAt: number };
    if (data.returnPath?.startsWith('bounce+')) last = { messageId: data.messageId, returnPath: data.returnPath, at: data.occurredAt };
  }
  return last;
}

type KeyProbeRead = Awaited<ReturnType<typeof readKeyProbe>>;

/** The log's latest key probe as read, and whether this process's key opens it. */
async function readKeyProbe(deps: { events: EventStore; secrets: SecretBox }) {
  const last = (await deps.events.readStream(SECRET_KEY_STREAM)).at(-1) ?? null;
  const probe = last ? parseEvent(last, secretKeyEventSchemas) : null;
  return { last, probe, opens: probe !== null && keyOpensProbe((sealed) => deps.secrets.open(sealed), probe.data.sealedProbe) };
}

function probeRefused(config: Config, probe: { data: { occurredAt: number } }, recorded: RecordedEvent | null): StartupError {
  const by = recordedByOf(recorded?.metadata);
  return new StartupError(
    `${keySourceOf(config)} does not open the secret key probe recorded in the event log on ${new Date(probe.data.occurredAt).toISOString()}${by ? ` by ${by}` : ''}: it is not the key the service has been using (a lost or replaced secret.key, or a SECRET_KEY that differs from the other processes'). Restore the original key; if it is lost for good, start with SECRET_KEY_CHECK=false, rotate every webhook subscription's secret with a grace of 0, and start once more with SECRET_KEY_CHECK=false: that start records a probe under the new key.`,
  );
}

/** `host h (pid p, key from k)` from a probe's metadata, or null for a probe recorded without it. */
function recordedByOf(metadata: Record<string, unknown> | undefined): string | null {
  const by = metadata?.recordedBy as { host?: unknown; pid?: unknown; keySource?: unknown } | undefined;
  if (!by || typeof by.host !== 'string') return null;
  return `host ${by.host} (pid ${String(by.pid)}, key from ${String(by.keySource)})`;
}

/**
 * Records a probe under this process's key when the log has none it opens: a new log, one older than
 * the probe, or (SECRET_KEY_CHECK=false, once the subscriptions' secrets open under this key) one
 * sealed under a key lost for good. `read`: the probe as the start read it. Two processes starting
 * at once on a new log: one records it, the other then finds it and checks it.
 */
async function recordKeyProbe(deps: { config: Config; events: EventStore; secrets: SecretBox; clock: { now(): Date } }, read: KeyProbeRead): Promise<void> {
  for (let tries = 0; ; tries++) {
    const { last, probe, opens } = tries === 0 ? read : await readKeyProbe(deps);
    if (opens) return;
    if (probe && deps.config.SECRET_KEY_CHECK) throw probeRefused(deps.config, probe, last);
    try {
      const data = { sealedProbe: deps.secrets.seal(SECRET_KEY_PROBE), occurredAt: deps.clock.now().getTime() };
      // Who recorded it, for an operator reading a refusal: never the key itself.
      const metadata = { recordedBy: { host: hostname(), pid: process.pid, keySource: keySourceOf(deps.config) } };
      await deps.events.append(SECRET_KEY_STREAM, [{ type: 'SecretKeyProbeRecorded', data, metadata }], last ? last.revision : 'no_stream');
      return;
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError) || tries >= 2) throw error;
    }
  }
}

const keySourceOf = (config: Config) => (config.SECRET_KEY ? 'SECRET_KEY' : secretKeyFile(config));
