import {
  AUTO_DISABLE_THRESHOLD,
  type DeliveriesState,
  type WebhookDeliveryEvent,
  deliveriesStream,
  evolveDeliveries,
  initialDeliveriesState,
} from '../../domain/webhookDelivery.ts';
import { type EventStore, WrongExpectedRevisionError } from '../../ports/eventStore.ts';

interface Queued {
  events: WebhookDeliveryEvent[];
  resolve: (accepted: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * The writer of one subscription's deliveries stream in this process. Appends are queued and
 * written in batches with the stream revision it last saw (compare-and-set), so a second worker
 * copy writing the same stream makes the append conflict; the ledger then re-reads the stream and
 * decides the queued items again. Decisions made here, on the stream's own order:
 * - a `DeliveryScheduled` whose delivery is already in the stream is refused (the claim: one owner per event and subscription);
 * - records of a delivery that is no longer pending are refused (another copy ended it);
 * - `DeliveryFailed` carries the consecutive-failure count, and the failure that reaches the
 *   threshold is followed, in the same append, by `SubscriptionAutoDisabled`.
 */
export class DeliveryLedger {
  state: DeliveriesState = initialDeliveriesState();
  /** null until loaded. */
  private revision: bigint | 'no_stream' | null = null;
  deleted = false;
  private queue: Queued[] = [];
  private flushing: Promise<void> | null = null;
  /** Set and cleared synchronously with the queue check, so no write is left behind between flushes. */
  private running = false;

  constructor(
    private readonly store: EventStore,
    readonly subscriptionId: string,
    private readonly hooks: {
      now(): string;
      /** Claims at or before this source position can no longer come twice; forget them. */
      checkpoint(): bigint;
      onDisabled(subscriptionId: string): void;
      /** Pause after each durable append so the next one carries more records (fewer fsyncs under load). */
      lingerMs?: number;
    },
  ) {}

  get loaded(): boolean {
    return this.revision !== null;
  }

  /** (Re)reads the stream and folds it. A stream that existed and is now empty was deleted. */
  async load(): Promise<void> {
    const history = await this.store.readStream(deliveriesStream(this.subscriptionId));
    const existed = this.revision !== null && this.revision !== 'no_stream';
    const state = initialDeliveriesState();
    for (const e of history) evolveDeliveries(state, { type: e.type, data: e.data } as WebhookDeliveryEvent);
    this.prune(state, this.hooks.checkpoint(), true);
    this.state = state;
    this.revision = history.length === 0 ? 'no_stream' : history[history.length - 1]!.revision;
    if (existed && history.length === 0) this.deleted = true;
  }

  private prunedAt = 0;

  /** Forgets claims the dispatcher can no longer meet again; runs when enough have accumulated. */
  prune(state: DeliveriesState = this.state, checkpoint: bigint = this.hooks.checkpoint(), force = false): void {
    if (!force && state.scheduled.size < this.prunedAt + 1_000) return;
    this.prunedAt = state.scheduled.size;
    for (const [id, position] of state.scheduled) if (position <= checkpoint && !state.pending.has(id)) state.scheduled.delete(id);
    this.prunedAt = state.scheduled.size;
  }

  /** Appends one item (all its events or none). Resolves false when the item was refused. */
  write(events: WebhookDeliveryEvent[]): Promise<boolean> {
    if (this.deleted) return Promise.resolve(false);
    return new Promise((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      if (!this.running) {
        this.running = true;
        this.flushing = this.flush();
      }
    });
  }

  /** Stops all writing and waits for a batch in progress; the caller then deletes the stream. */
  async destroy(): Promise<void> {
    this.deleted = true;
    await this.flushing;
    for (const item of this.queue.splice(0)) item.resolve(false);
  }

  private async flush(): Promise<void> {
    try {
      await this.drain();
    } catch (error) {
      this.running = false;
      for (const item of this.queue.splice(0)) item.reject(error);
    }
  }

  private async drain(): Promise<void> {
    let conflicts = 0;
    for (;;) {
      if (this.queue.length === 0) {
        this.running = false;
        return;
      }
      const batch = this.queue.splice(0);
      try {
        if (this.revision === null) await this.load();
        if (this.deleted) {
          for (const item of batch) item.resolve(false);
          continue;
        }
        const { events, accepted, disabledNow } = this.decide(batch);
        if (events.length > 0) {
          const result = await this.store.append(
            deliveriesStream(this.subscriptionId),
            events.map((e) => ({ type: e.type, data: e.data })),
            this.revision ?? 'no_stream',
          );
          for (const e of events) evolveDeliveries(this.state, e);
          this.revision = result.nextExpectedRevision;
        }
        conflicts = 0;
        batch.forEach((item, i) => item.resolve(accepted[i]!));
        if (disabledNow) this.hooks.onDisabled(this.subscriptionId);
        // Under continuous load, gather a little more before the next durable append (one fsync each).
        const linger = this.hooks.lingerMs ?? 0;
        if (linger > 0 && events.length > 0) await new Promise((r) => setTimeout(r, linger));
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError && conflicts < 50) {
          conflicts++;
          this.queue.unshift(...batch);
          try {
            await this.load();
          } catch (loadError) {
            for (const item of this.queue.splice(0)) item.reject(loadError);
          }
          continue;
        }
        for (const item of batch) item.reject(error);
      }
    }
  }

  /** Which queued items go in, in order, and the events they become. Pure over the folded state. */
  private decide(batch: Queued[]): { events: WebhookDeliveryEvent[]; accepted: boolean[]; disabledNow: boolean } {
    const events: WebhookDeliveryEvent[] = [];
    const accepted: boolean[] = [];
    const scheduled = new Set<string>();
    const ended = new Set<string>();
    let failures = this.state.consecutiveFailures;
    let disabled = this.state.disabled;
    let disabledNow = false;
    for (const item of batch) {
      const first = item.events[0];
      if (!first) {
        accepted.push(true);
        continue;
      }
      const id = 'deliveryId' in first.data ? first.data.deliveryId : undefined;
      let ok: boolean;
      if (first.type === 'DeliveryScheduled') ok = !this.state.scheduled.has(id!) && !scheduled.has(id!);
      else ok = id !== undefined && this.state.pending.has(id) && !ended.has(id);
      accepted.push(ok);
      if (!ok) continue;
      for (const e of item.events) {
        if (e.type === 'DeliveryScheduled') scheduled.add(e.data.deliveryId);
        if (e.type === 'DeliverySucceeded') {
          failures = 0;
          ended.add(e.data.deliveryId);
          events.push(e);
        } else if (e.type === 'DeliveryFailed') {
          failures += 1;
          ended.add(e.data.deliveryId);
          events.push({ type: 'DeliveryFailed', data: { ...e.data, consecutiveFailures: failures } });
          if (failures >= AUTO_DISABLE_THRESHOLD && !disabled) {
            disabled = true;
            disabledNow = true;
            events.push({ type: 'SubscriptionAutoDisabled', data: { subscriptionId: this.subscriptionId, consecutiveFailures: failures, disabledAt: this.hooks.now() } });
          }
        } else {
          if (e.type === 'DeliveryAbandoned') ended.add(e.data.deliveryId);
          events.push(e);
        }
      }
    }
    return { events, accepted, disabledNow };
  }
}
