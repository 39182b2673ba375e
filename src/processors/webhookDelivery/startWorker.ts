import { claimWorkerIdentity } from '../../adapters/sqlite/workerIdentity.ts';
import type { Services } from '../../services.ts';
import { backgroundEventStore } from '../backgroundEventStore.ts';
import { type WorkerDeps, WebhookDeliveryWorker, type WorkerOptions, workerOptionsFrom } from './worker.ts';

/**
 * Starts the webhook subscriber process inside the given services (npm start, `outreach worker webhooks`).
 * Without WEBHOOK_WORKER_ID it takes a name no other running delivery worker on this host holds
 * (see claimWorkerIdentity), freed when it stops.
 */
export async function startWebhookWorker(
  services: Services,
  log?: { error(obj: unknown, msg?: string): void },
  overrides: Partial<WorkerOptions> = {},
): Promise<WebhookDeliveryWorker> {
  const { config } = services;
  const options: WorkerOptions = { ...workerOptionsFrom(config), log, ...overrides };
  const deps = webhookWorkerDeps(services);
  const identity = config.WEBHOOK_WORKER_ID || overrides.workerId ? null : claimWorkerIdentity(config.DATA_DIR, 'webhooks');
  let worker: WebhookDeliveryWorker | null = null;
  try {
    worker = new WebhookDeliveryWorker(deps, { ...options, ...(identity ? { workerId: identity.workerId, onStopped: () => identity.release() } : {}) });
    await worker.start();
    return worker;
  } catch (error) {
    // A half-started worker may hold retries already: stopped before its name is free again.
    await worker?.stop().catch(() => {});
    identity?.release();
    throw error;
  }
}

/** The worker's ports: its appends (claims and records) commit off the event loop it shares with the API; it follows departed people's apps too. */
export function webhookWorkerDeps(services: Services): WorkerDeps {
  return {
    events: backgroundEventStore(services.events),
    readModels: services.readModels,
    secrets: services.secrets,
    clock: services.clock,
    counters: services.counters,
    departedApps: { projections: services.projections, newId: () => services.newId() },
  };
}
