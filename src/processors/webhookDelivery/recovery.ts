import { isOrphaned } from '../../domain/webhookDelivery.ts';
import { sleep } from '../../lib/sleep.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import { listPendingDeliveries } from '../../readModels/webhookDeliveries.ts';
import type { DeliveryLedgers } from './deliveryLedger.ts';
import type { Scheduler } from './scheduler.ts';
import type { Targets } from './targets.ts';

export interface RecoveryDeps {
  readModels: ReadModelStore;
  clock: Clock;
  targets: Targets;
  ledgers: DeliveryLedgers;
  scheduler: Scheduler;
  workerId: string;
  orphanAfterMs: number;
  log?: { error(obj: unknown, msg?: string): void };
}

/**
 * Pending deliveries from durable state. At start every active subscription's stream is folded and
 * its unfinished deliveries resumed: this copy's own at once, another copy's once orphaned. While
 * running, retries left behind by a copy that stopped are found through the read model and taken over.
 */
export class Recovery {
  constructor(private readonly deps: RecoveryDeps) {}

  async resumeAtStart(): Promise<void> {
    const { targets, ledgers, scheduler, workerId, orphanAfterMs } = this.deps;
    const now = this.deps.clock.now().getTime();
    for (const target of targets.all()) {
      if (!target.active) continue;
      const ledger = ledgers.of(target.id);
      await ledger.load();
      for (const p of ledger.state.pending.values()) {
        if (p.workerId === workerId || isOrphaned(p, now, orphanAfterMs)) scheduler.hold(p);
      }
    }
  }

  /** Takes over retries left behind by a worker copy that stopped (found through the read model). */
  async orphanLoop(signal: AbortSignal): Promise<void> {
    const { targets, ledgers, scheduler, orphanAfterMs } = this.deps;
    const every = Math.max(1_000, Math.floor(orphanAfterMs / 2));
    while (!signal.aborted) {
      await sleep(every, signal);
      if (signal.aborted) return;
      try {
        const now = this.deps.clock.now().getTime();
        const docs = await listPendingDeliveries(this.deps.readModels);
        const stale = new Set<string>();
        for (const doc of docs) {
          const k = doc.id;
          if (scheduler.isHeld(k)) continue;
          const last = Math.max(Date.parse(doc.updated_at), doc.next_attempt_at ? Date.parse(doc.next_attempt_at) : 0);
          if (now - last > orphanAfterMs) stale.add(doc.subscription_id);
        }
        for (const id of stale) {
          const target = targets.get(id);
          if (!target?.active) continue;
          const ledger = ledgers.of(id);
          await ledger.load();
          for (const p of ledger.state.pending.values()) if (isOrphaned(p, now, orphanAfterMs)) scheduler.hold(p);
        }
      } catch (error) {
        this.deps.log?.error({ err: error }, 'webhook orphan scan failed');
      }
    }
  }
}
