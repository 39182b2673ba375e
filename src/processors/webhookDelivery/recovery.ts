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
  /** When a beat last reached the counter store (epoch ms; null: none yet). */
  private lastBeatAt: number | null = null;
  /** Whether this copy may look silent now (no beat reached the counter store for a window). */
  private lapsed = false;
  /**
   * Since the last time this copy may have looked silent (null: never), the deliveries checked for
   * claims (job key) and the subscriptions whose streams were read again.
   */
  private sinceLapse: { checked: Set<string>; reread: Set<string> } | null = null;

  constructor(private readonly deps: RecoveryDeps) {}

  /**
   * For a counter store shared across hosts (the worker asks only then), where this copy may fail to
   * reach it while the others do; on a host's own file they fail together. Whether an attempt of a
   * held delivery may start now: 'wait' while this copy may look silent to the others (its last beat
   * that reached the counter store is a window old or more) or the claims cannot be read; after such
   * a time, 'taken' when another live copy claimed it meanwhile, or its stream shows it attempted or
   * ended by another since (each delivery checked once).
   */
  async clearToAttempt(p: PendingDelivery): Promise<'go' | 'wait' | 'taken'> {
    const now = this.deps.clock.now().getTime();
    if (this.lastBeatAt === null || now - this.lastBeatAt >= this.deps.liveness.windowMs) {
      if (!this.lapsed) {
        this.lapsed = true;
        this.sinceLapse = { checked: new Set(), reread: new Set() };
      }
      return 'wait';
    }
    const since = this.sinceLapse;
    if (!since || since.checked.has(jobKey(p))) return 'go';
    try {
      if (await this.deps.claims.claimedByAnother(p)) return 'taken';
      // Another copy may have taken it over and sent it since (and stopped): the stream says.
      const ledger = this.deps.ledgers.of(p.subscriptionId);
      if (!since.reread.has(p.subscriptionId)) {
        await ledger.load();
        since.reread.add(p.subscriptionId);
      }
      const current = ledger.state.pending.get(p.deliveryId);
      if (current?.attempts !== p.attempts || current.workerId !== p.workerId) return 'taken';
    } catch (error) {
      this.deps.log?.warn?.({ err: error }, 'webhook takeover marks unknown; attempt waits');
      return 'wait';
    }
    since.checked.add(jobKey(p));
    return 'go';
  }

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
  async beat(): Promise<void> {
    const at = this.deps.clock.now().getTime();
    try {
      await this.deps.liveness.beat(this.deps.workerId);
      this.lastBeatAt = at;
      this.lapsed = false;
    } catch (error) {
      this.deps.log?.warn?.({ err: error }, 'webhook worker heartbeat failed');
    }
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
    return !(await this.deps.claims.claimedByAnother(p).catch((error: unknown) => {
      this.deps.log?.warn?.({ err: error }, 'webhook takeover marks unknown; own delivery kept');
      return false;
    }));
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
