import type { Services } from '../../services.ts';
import { WebhookDeliveryWorker, type WorkerOptions, workerOptionsFrom } from './worker.ts';

/** Starts the webhook subscriber process inside the given services (npm start, `outreach worker webhooks`). */
export async function startWebhookWorker(
  services: Services,
  log?: { error(obj: unknown, msg?: string): void },
  overrides: Partial<WorkerOptions> = {},
): Promise<WebhookDeliveryWorker> {
  const worker = new WebhookDeliveryWorker(services, { ...workerOptionsFrom(services.config), log, ...overrides });
  await worker.start();
  return worker;
}
