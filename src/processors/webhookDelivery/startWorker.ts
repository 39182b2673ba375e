import type { Services } from '../../services.ts';
import { backgroundEventStore } from '../backgroundEventStore.ts';
import { type WorkerDeps, WebhookDeliveryWorker, type WorkerOptions, workerOptionsFrom } from './worker.ts';

/** Starts the webhook subscriber process inside the given services (npm start, `outreach worker webhooks`). */
export async function startWebhookWorker(
  services: Services,
  log?: { error(obj: unknown, msg?: string): void },
  overrides: Partial<WorkerOptions> = {},
): Promise<WebhookDeliveryWorker> {
  const worker = new WebhookDeliveryWorker(webhookWorkerDeps(services), { ...workerOptionsFrom(services.config), log, ...overrides });
  await worker.start();
  return worker;
}

/** The worker's ports: its appends (claims and records) commit off the event loop it shares with the API. */
export function webhookWorkerDeps(services: Services): WorkerDeps {
  return { events: backgroundEventStore(services.events), readModels: services.readModels, secrets: services.secrets, clock: services.clock };
}
