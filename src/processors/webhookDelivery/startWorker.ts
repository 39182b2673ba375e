import type { Services } from '../../services.ts';
import { WebhookDeliveryWorker, workerOptionsFrom } from './worker.ts';

/** Starts the webhook subscriber process inside the given services (npm start, `outreach worker webhooks`). */
export async function startWebhookWorker(
  services: Services,
  log?: { error(obj: unknown, msg?: string): void },
): Promise<WebhookDeliveryWorker> {
  const worker = new WebhookDeliveryWorker(services, { ...workerOptionsFrom(services.config), log });
  await worker.start();
  return worker;
}
