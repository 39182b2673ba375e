import type { WebhookEventType } from '../../domain/eventCatalog.ts';
import type { OutreachEvent } from '../../domain/outreachEvents.ts';
import { WEBHOOK_TYPE_OF } from '../../domain/outreachEvents.ts';
import { type DeliveryScheduledData, type WebhookDeliveryEvent, announced, buildEnvelope, deliveriesStream, pendingFrom } from '../../domain/webhookDelivery.ts';
import { type EventSchemas, outreachEventSchemas, siteEventSchemas, webhookDeliveryEventSchemas, webhookSubscriptionEventSchemas } from '../../domain/eventSchemas.ts';
import type { SiteEvent } from '../../domain/site.ts';
import type { Document } from '../../ports/readModelStore.ts';
import type { WebhookSubscriptionEvent } from '../../domain/webhookSubscription.ts';
import { parseEvent } from '../../lib/parseEvent.ts';
import { followLog, readPageOfTypes } from '../../lib/followLog.ts';
import { LazyCheckpoint, type StoreOutcome } from '../../lib/lazyCheckpoint.ts';
import type { Clock } from '../../ports/clock.ts';
import type { EventStore } from '../../ports/eventStore.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import type { DeliveryLedgers } from './deliveryLedger.ts';
import type { Job, Scheduler } from './scheduler.ts';
import { TARGETS, type TargetDoc, type Targets, fromDoc, targetOf, toDoc } from './targets.ts';

/** What the dispatcher follows: the subscriptions' lifecycle and the outreach facts it turns into deliveries. */
type DispatchedEvent =
  | WebhookSubscriptionEvent
  | Extract<WebhookDeliveryEvent, { type: 'SubscriptionAutoDisabled' }>
  | Extract<SiteEvent, { type: 'SiteWebhooksSwitched' }>
  | OutreachEvent;
const dispatchedEventSchemas: EventSchemas<DispatchedEvent> = {
  ...webhookSubscriptionEventSchemas,
  SubscriptionAutoDisabled: webhookDeliveryEventSchemas.SubscriptionAutoDisabled,
  SiteWebhooksSwitched: siteEventSchemas.SiteWebhooksSwitched,
  ...outreachEventSchemas,
};
const DISPATCHED_TYPES = Object.keys(dispatchedEventSchemas);

/** The worker's own checkpoint and its view of the subscriptions as of that checkpoint. */
export const DISPATCHER = 'webhookDispatcher';
const DISPATCHER_VERSION = 1;
/** Sites whose outbound webhooks are switched off, as of the dispatcher's checkpoint (absent: on). */
export const SITES_WEBHOOKS_OFF = 'webhookDispatchSitesOff';
const PAGE = 500;

export interface DispatcherDeps {
  events: EventStore;
  readModels: ReadModelStore;
  clock: Clock;
  targets: Targets;
  ledgers: DeliveryLedgers;
  scheduler: Scheduler;
  workerId: string;
  log?: { error(obj: unknown, msg?: string): void };
}

/**
 * Follows the global log from the worker's own checkpoint. It keeps its view of the subscriptions
 * (`webhookDispatchTargets`) from the subscription events, and for each of the five domain facts
 * claims one delivery per matching active subscription with `ScheduleDelivery` (compare-and-set on
 * that subscription's deliveries stream, so several copies never take the same event twice) before
 * its checkpoint moves past the event. A deleted subscription's stream is erased here too.
 */
export class Dispatcher {
  /** Stored behind where it has read only by pages it acted on nothing in. */
  private readonly cp: LazyCheckpoint;
  /** Sites switched off, followed in log order: an event is delivered only if its site was on when it happened. */
  private sitesOff = new Set<string>();

  constructor(private readonly deps: DispatcherDeps) {
    this.cp = new LazyCheckpoint(deps.readModels, DISPATCHER, DISPATCHER_VERSION);
  }

  get checkpoint(): bigint {
    return this.cp.position;
  }

  /** Claims at or before it can no longer come twice, from this copy or another (the delivery ledgers forget them). */
  get storedCheckpoint(): bigint {
    return this.cp.stored;
  }

  /** Reads the checkpoint and the targets stored with it (both reset when the version changed). */
  async loadState(): Promise<void> {
    const stored = await this.deps.readModels.getCheckpoint(DISPATCHER);
    if (!stored || stored.version !== DISPATCHER_VERSION) {
      await this.deps.readModels.reset(DISPATCHER, [TARGETS, SITES_WEBHOOKS_OFF]);
      this.cp.at(-1n);
    } else this.cp.at(stored.position);
    this.deps.targets.clear();
    for (const doc of await this.deps.readModels.find<TargetDoc>(TARGETS, {})) this.deps.targets.set(fromDoc(doc));
    this.sitesOff.clear();
    for (const doc of await this.deps.readModels.find<Document>(SITES_WEBHOOKS_OFF, {})) this.sitesOff.add(doc.id);
  }

  loop(signal: AbortSignal): Promise<void> {
    return followLog(this.deps.events, { position: () => this.cp.position, step: () => this.dispatchPage() }, signal, (error) =>
      this.deps.log?.error({ err: error }, 'webhook dispatcher failed; retrying'),
    );
  }

  /**
   * One page of the global log. Returns false when there was nothing new. A page with claims or
   * subscription changes moves the stored checkpoint before the next is read; one it acts on nothing
   * in (the deliveries' own records, sites nobody subscribed for) moves it in memory (LazyCheckpoint:
   * a read-model commit per append otherwise, while deliveries are recorded).
   */
  async dispatchPage(): Promise<boolean> {
    const { targets, ledgers, scheduler } = this.deps;
    const from = this.cp.position;
    // Only the types it acts on: the deliveries' own records, two of every three events while it sends, are passed over unread.
    const { page, to } = await readPageOfTypes(this.deps.events, from, PAGE, DISPATCHED_TYPES);
    if (to <= from) {
      await this.settle(await this.cp.idle());
      return false;
    }
    const writes: Array<{ position: bigint; id: string; doc: TargetDoc | null }> = [];
    const switches: Array<{ position: bigint; siteId: string; enabled: boolean }> = [];
    // This page's view of the switches; kept only once the checkpoint has moved past them (a failed page is read again).
    const sitesOff = new Set(this.sitesOff);
    const claims = new Map<string, DeliveryScheduledData[]>();
    const deleted: string[] = [];
    const now = this.deps.clock.now();
    for (const recorded of page) {
      const event = parseEvent(recorded, dispatchedEventSchemas);
      if (!event) continue;
      if (event.type === 'SubscriptionCreated') {
        const target = targetOf(event.data);
        targets.set(target);
        writes.push({ position: recorded.position, id: target.id, doc: toDoc(target) });
      } else if (event.type === 'SubscriptionDeleted') {
        const id = event.data.subscriptionId;
        targets.remove(id);
        deleted.push(id);
        claims.delete(id);
        writes.push({ position: recorded.position, id, doc: null });
      } else if (event.type === 'SubscriptionUpdated') {
        const target = targets.update(event.data.subscriptionId, event.data.url, event.data.eventTypes);
        if (target) writes.push({ position: recorded.position, id: target.id, doc: toDoc(target) });
      } else if (event.type === 'SubscriptionSecretRotated') {
        const { subscriptionId, sealedSecret, previousSealedSecret, previousSecretExpiresAt } = event.data;
        const target = targets.rotate(subscriptionId, sealedSecret, previousSealedSecret, previousSecretExpiresAt ? Date.parse(previousSecretExpiresAt) : null);
        if (target) writes.push({ position: recorded.position, id: target.id, doc: toDoc(target) });
      } else if (event.type === 'SiteWebhooksSwitched') {
        if (event.data.enabled) sitesOff.delete(event.data.siteId);
        else sitesOff.add(event.data.siteId);
        switches.push({ position: recorded.position, siteId: event.data.siteId, enabled: event.data.enabled });
      } else if (event.type === 'SubscriptionAutoDisabled') {
        const id = event.data.subscriptionId;
        const target = targets.deactivate(id);
        if (target) writes.push({ position: recorded.position, id, doc: toDoc(target) });
      } else {
        const subscribers = targets.idsOfSite(event.data.siteId);
        if (!subscribers || sitesOff.has(event.data.siteId) || !announced(event)) continue;
        const eventType: WebhookEventType = WEBHOOK_TYPE_OF[event.type];
        let envelope: ReturnType<typeof buildEnvelope> | null = null;
        for (const id of subscribers) {
          const target = targets.get(id)!;
          if (!target.active || !target.eventTypes.has(eventType)) continue;
          envelope ??= buildEnvelope(event, recorded.id);
          let list = claims.get(id);
          if (!list) claims.set(id, (list = []));
          list.push({
            subscriptionId: id,
            deliveryId: recorded.id,
            sourcePosition: recorded.position.toString(),
            eventType,
            webhookId: envelope.webhookId,
            body: envelope.body,
            scheduledAt: now.toISOString(),
            dueAt: now.getTime(),
            workerId: this.deps.workerId,
          });
        }
      }
    }

    if (claims.size === 0 && writes.length === 0 && switches.length === 0 && deleted.length === 0) {
      await this.settle(await this.cp.passed(to));
      return true;
    }

    // Claims are durable before the checkpoint moves past their events.
    const accepted: Job[] = [];
    await Promise.all(
      [...claims].map(async ([id, list]) => {
        const ledger = ledgers.of(id);
        const results = await Promise.all(list.map((data) => ledger.handle({ type: 'ScheduleDelivery', data })));
        for (const events of results) for (const e of events) if (e.type === 'DeliveryScheduled') accepted.push(pendingFrom(e.data));
      }),
    );

    // Claimed work starts now, whatever happens to the checkpoint step below.
    for (const job of accepted) if (targets.has(job.subscriptionId)) scheduler.hold(job);
    // A deleted subscription's retries stop and its history goes before the checkpoint passes the deletion.
    for (const id of deleted) await this.erase(id);
    const moved = await this.deps.readModels.applyBatch(DISPATCHER, DISPATCHER_VERSION, this.cp.stored, to, async (writerAt) => {
      for (const w of writes) {
        if (w.doc) await writerAt(w.position).put(TARGETS, w.doc);
        else await writerAt(w.position).remove(TARGETS, w.id);
      }
      for (const w of switches) {
        if (w.enabled) await writerAt(w.position).remove(SITES_WEBHOOKS_OFF, w.siteId);
        else await writerAt(w.position).put(SITES_WEBHOOKS_OFF, { id: w.siteId });
      }
    });
    if (moved) {
      this.cp.committed(to);
      this.sitesOff = sitesOff;
      ledgers.pruneAll();
    } else {
      // Another copy moved the checkpoint first: take its view and go on from there.
      await this.loadState();
    }
    return true;
  }

  /** Stores the checkpoint moved in memory past pages it acted on nothing in (at stop, too). */
  async storeCheckpoint(): Promise<void> {
    await this.settle(await this.cp.store());
  }

  /** After a store: the ledgers forget the claims it passed; another copy that moved first is followed from its view. */
  private async settle(outcome: StoreOutcome): Promise<void> {
    if (outcome === 'stored') this.deps.ledgers.pruneAll();
    else if (outcome === 'lost') await this.loadState();
  }

  /** Deleting a subscription stops its pending retries and erases its delivery history. */
  private async erase(subscriptionId: string): Promise<void> {
    this.deps.targets.remove(subscriptionId);
    this.deps.scheduler.cancel(subscriptionId);
    await this.deps.ledgers.of(subscriptionId).destroy();
    await this.deps.events.deleteStream?.(deliveriesStream(subscriptionId));
  }
}
