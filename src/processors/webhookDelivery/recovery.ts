import { isOrphaned, type PendingDelivery } from '../../domain/webhookDelivery.ts';
import { sleep } from '../../lib/sleep.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import { listPendingDeliveries } from '../../readModels/webhookDeliveries.ts';
import type { DeliveryLedgers } from './deliveryLedger.ts';
import { jobKey, type Scheduler } from './scheduler.ts';
import type { Targets } from './targets.ts';
import type { TakeoverClaims } from './takeoverClaims.ts';
import type { WorkerLiveness } from './workerLiveness.ts';

export interface RecoveryDeps {
  readModels: ReadModelStore;
  clock: Clock;
  targets: Targets;
  ledgers: DeliveryLedgers;
  scheduler: Scheduler;
  workerId: string;
  orphanAfterMs: number;
  liveness: WorkerLiveness;
  claims: TakeoverClaims;
  log?: { error(obj: unknown, msg?: string): void; warn?(obj: unknown, msg?: string): void };
}

/**
 * Pending deliveries from durable state. At start every active subscription's stream is folded and
 * its unfinished deliveries resumed: this copy's own at once, another copy's once orphaned. While
 * running, retries left behind by a copy that stopped are found through the read model and taken over.
 * A delivery is an orphan when untouched for `orphanAfterMs` past its due time and the copy that
 * holds it has stopped beating (WorkerLiveness); this copy's own, when it is not in its scheduler.
 */
export class Recovery {
  constructor(private readonly deps: RecoveryDeps) {}

  async resumeAtStart(): Promise<void> {
    const { targets, ledgers, scheduler, workerId } = this.deps;
    const now = this.deps.clock.now().getTime();
    const abandoned = this.abandonedBy();
    for (const target of targets.all()) {
      if (!target.active) continue;
      const ledger = ledgers.of(target.id);
      await ledger.load();
      for (const p of ledger.state.pending.values()) {
        if (p.workerId === workerId ? await this.stillOwn(p) : await abandoned(p, now)) scheduler.hold(p);
      }
    }
  }

  /** One beat of this copy (see WorkerLiveness), made at start before anything is held; a beat that fails is logged. */
  beat(): Promise<void> {
    return this.deps.liveness.beat(this.deps.workerId).catch((error: unknown) => this.deps.log?.warn?.({ err: error }, 'webhook worker heartbeat failed'));
  }

  /** Beats for this copy until `signal` aborts. */
  async keepBeating(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleep(this.deps.liveness.beatEveryMs, signal);
      if (signal.aborted) return;
      await this.beat();
    }
  }

  /** One of this copy's own (by its name): not when another live copy took it over while this one was down. */
  private async stillOwn(p: PendingDelivery): Promise<boolean> {
    return !(await this.deps.claims.claimedByAnother(p).catch(() => false));
  }

  private markedByThis(p: PendingDelivery): Promise<boolean> {
    return this.deps.claims.markedByThis(p).catch((error: unknown) => {
      this.deps.log?.warn?.({ err: error }, 'webhook takeover marks unknown; not resumed');
      return false;
    });
  }

  /** A test for orphans, asking the counter store once per silent-looking copy it meets; another copy's is claimed before it is taken. */
  private abandonedBy(): (p: PendingDelivery, now: number) => Promise<boolean> {
    const { liveness, workerId, orphanAfterMs } = this.deps;
    const silent = new Map<string, Promise<boolean>>();
    return async (p, now) => {
      if (!isOrphaned(p, now, orphanAfterMs)) return false;
      if (p.workerId === workerId) return this.stillOwn(p);
      // Taken over by this copy before it stopped, not attempted yet: the holder's name leaves it to this one.
      if (await this.markedByThis(p)) return true;
      let answer = silent.get(p.workerId);
      if (!answer) {
        // Unknown is not silent: a delivery taken from a live copy is sent twice, one left waits for the store.
        answer = liveness.isSilent(p.workerId).catch((error: unknown) => {
          this.deps.log?.warn?.({ err: error }, 'webhook worker liveness unknown; not taken over');
          return false;
        });
        silent.set(p.workerId, answer);
      }
      if (!(await answer)) return false;
      return this.deps.claims.claim(p).catch((error: unknown) => {
        this.deps.log?.warn?.({ err: error }, 'webhook takeover claim failed; not taken over');
        return false;
      });
    };
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
        const abandoned = this.abandonedBy();
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
          // What this copy holds already is not claimed again.
          for (const p of ledger.state.pending.values()) if (!scheduler.isHeld(jobKey(p)) && (await abandoned(p, now))) scheduler.hold(p);
        }
      } catch (error) {
        this.deps.log?.error({ err: error }, 'webhook orphan scan failed');
      }
    }
  }
}
