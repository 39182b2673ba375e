import {
  type DeliveriesState,
  type WebhookDeliveryCommand,
  type WebhookDeliveryEvent,
  deliveriesStream,
  forgetSettledClaims,
  webhookDeliveryDecider as decider,
} from '../../domain/webhookDelivery.ts';
import { webhookDeliveryEventSchemas } from '../../domain/eventSchemas.ts';
import { parseEvent } from '../../lib/parseEvent.ts';
import { type EventStore, WrongExpectedRevisionError } from '../../ports/eventStore.ts';

interface Queued {
  command: WebhookDeliveryCommand;
  resolve: (events: WebhookDeliveryEvent[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Loads and appends one subscription's deliveries stream for this process; the decisions are the
 * decider's (`domain/webhookDelivery.ts`). Commands are queued and handled in batches: each is
 * decided on the state left by the ones before it, and the batch is appended at once with the
 * stream revision last seen (compare-and-set). When another worker copy wrote the stream first,
 * the append conflicts and the batch is decided again on the re-read stream.
 */
export class DeliveryLedger {
  private current: DeliveriesState = decider.initialState();
  /** null until loaded. */
  private revision: bigint | 'no_stream' | null = null;
  deleted = false;
  private queue: Queued[] = [];
  private flushing: Promise<void> | null = null;
  /** Set and cleared synchronously with the queue check, so no write is left behind between flushes. */
  private running = false;
  private prunedAt = 0;
  /** Ends the pause after an append at once (set while pausing). */
  private endLinger: (() => void) | null = null;

  constructor(
    private readonly store: EventStore,
    readonly subscriptionId: string,
    private readonly options: {
      /** Claims at or before this source position can no longer come twice; forget them. */
      checkpoint(): bigint;
      /** Pause after each durable append so the next one carries more records (fewer fsyncs under load). */
      lingerMs?: number;
    },
  ) {}

  get state(): DeliveriesState {
    return this.current;
  }

  get loaded(): boolean {
    return this.revision !== null;
  }

  /** (Re)reads the stream and folds it. A stream that existed and is now empty was deleted. */
  async load(): Promise<void> {
    const history = await this.store.readStream(deliveriesStream(this.subscriptionId));
    const existed = this.revision !== null && this.revision !== 'no_stream';
    const state = history.reduce((s, recorded) => {
      const event = parseEvent(recorded, webhookDeliveryEventSchemas);
      return event ? decider.evolve(s, event) : s;
    }, decider.initialState());
    this.current = this.forget(state);
    this.revision = history.length === 0 ? 'no_stream' : history[history.length - 1]!.revision;
    if (existed && history.length === 0) this.deleted = true;
  }

  /** Forgets claims the dispatcher can no longer meet again, once enough have accumulated. */
  prune(): void {
    if (this.current.scheduled.size >= this.prunedAt + 1_000) this.current = this.forget(this.current);
  }

  private forget(state: DeliveriesState): DeliveriesState {
    const pruned = forgetSettledClaims(state, this.options.checkpoint());
    this.prunedAt = pruned.scheduled.size;
    return pruned;
  }

  /** Decides and appends one command. Resolves with the events appended for it: none when it was refused. */
  handle(command: WebhookDeliveryCommand): Promise<WebhookDeliveryEvent[]> {
    if (this.deleted) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.queue.push({ command, resolve, reject });
      // A claim starts a delivery, so it does not wait out the pause that lets records gather.
      if (command.type === 'ScheduleDelivery') this.endLinger?.();
      if (!this.running) {
        this.running = true;
        this.flushing = this.flush();
      }
    });
  }

  /**
   * A graceful stop: writes the records already queued (an attempt is answered before its record is
   * durable; dropping the record would re-send the delivery at the next start), then stops writing.
   */
  async close(): Promise<void> {
    while (this.running) await this.flushing;
    this.deleted = true;
  }

  /** Stops all writing and waits for a batch in progress; the caller then deletes the stream. */
  async destroy(): Promise<void> {
    this.deleted = true;
    await this.flushing;
    for (const item of this.queue.splice(0)) item.resolve([]);
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
          for (const item of batch) item.resolve([]);
          continue;
        }
        let state = this.current;
        const decided = batch.map((item) => {
          const events = decider.decide(item.command, state);
          state = events.reduce(decider.evolve, state);
          return events;
        });
        const events = decided.flat();
        if (events.length > 0) {
          const result = await this.store.append(
            deliveriesStream(this.subscriptionId),
            events.map((e) => ({ type: e.type, data: e.data })),
            this.revision ?? 'no_stream',
          );
          this.current = state;
          this.revision = result.nextExpectedRevision;
        }
        conflicts = 0;
        batch.forEach((item, i) => item.resolve(decided[i]!));
        // Under continuous load, gather a little more before the next durable append (one fsync
        // each), unless a claim is waiting or comes meanwhile.
        const linger = this.options.lingerMs ?? 0;
        if (linger > 0 && events.length > 0 && !this.queue.some((q) => q.command.type === 'ScheduleDelivery')) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(() => this.endLinger?.(), linger);
            this.endLinger = () => {
              clearTimeout(timer);
              this.endLinger = null;
              resolve();
            };
          });
        }
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
}

/** The ledgers of one worker process, one per subscription, created on first use. */
export class DeliveryLedgers {
  private readonly bySubscription = new Map<string, DeliveryLedger>();

  constructor(
    private readonly store: EventStore,
    private readonly options: { checkpoint(): bigint; lingerMs?: number },
  ) {}

  of(subscriptionId: string): DeliveryLedger {
    let ledger = this.bySubscription.get(subscriptionId);
    if (!ledger) this.bySubscription.set(subscriptionId, (ledger = new DeliveryLedger(this.store, subscriptionId, this.options)));
    return ledger;
  }

  pruneAll(): void {
    for (const ledger of this.bySubscription.values()) ledger.prune();
  }

  /** Writes every ledger's queued records, then stops writing (the worker stops). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.bySubscription.values()].map((ledger) => ledger.close().catch(() => {})));
  }
}
