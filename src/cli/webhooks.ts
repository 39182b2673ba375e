import type { Command } from 'commander';
import type { Services } from '../services.ts';
import { assertSecretKeyOpens } from '../lifecycle/secretKeyCheck.ts';
import { TenancyError } from '../commands/tenancy.ts';
import { subscriptionStream } from '../domain/webhookSubscription.ts';
import { listDeliveriesOfSubscription } from '../readModels/webhookDeliveries.ts';
import { startWebhookWorker } from '../processors/webhookDelivery/startWorker.ts';
import { print } from './output.ts';
import { untilInterrupted } from './untilInterrupted.ts';
import { startWorkerProjections } from './workerProjections.ts';
import { type WorkerMetricsOptions, metricsOptions, startWorkerMetrics } from './workerMetrics.ts';

type WithServices = <T>(fn: (services: Services) => Promise<T>) => Promise<T>;

/** `outreach worker webhooks` and `outreach webhooks deliveries <subscriptionId>`. */
export function registerWebhookCommands(program: Command, json: () => boolean, withServices: WithServices): void {
  const worker = program.commands.find((c) => c.name() === 'worker') ?? program.command('worker').description('run one background role as its own process');
  metricsOptions(worker.command('webhooks'))
    .description('run the webhook delivery worker until interrupted (several copies may run at once)')
    .action(async (options: WorkerMetricsOptions) =>
      withServices(async (s) => {
        // A key that cannot open the signing secrets would leave every delivery retrying forever.
        await assertSecretKeyOpens(s);
        const projections = startWorkerProjections(s, (err) => process.stderr.write(`following the projections failed: ${String((err as Error)?.message ?? err)}\n`));
        const metrics = await startWorkerMetrics(s, options);
        const w = await startWebhookWorker(
          s,
          { error: (obj, msg) => process.stderr.write(`${msg ?? 'error'}: ${String((obj as { err?: Error }).err?.message ?? '')}\n`) },
          { onAttempt: (status) => metrics?.metrics.deliveryAttempted(status) },
        );
        if (metrics) metrics.metrics.sources.webhooks = w;
        print(json(), { worker: 'webhooks', started: true, workerId: w.workerId }, `webhook worker ${w.workerId} running; Ctrl-C stops it`);
        await untilInterrupted();
        await metrics?.close();
        await w.stop();
        await projections.stop();
      }),
    );

  const webhooks = program.commands.find((c) => c.name() === 'webhooks') ?? program.command('webhooks').description('webhook subscriptions');
  webhooks
    .command('deliveries <subscriptionId>')
    .description('every delivery of one subscription with each attempt (number, status, status code or error, duration)')
    .action(async (subscriptionId: string) =>
      withServices(async (s) => {
        // A deleted subscription still has its stream (and no deliveries); a mistyped id has none.
        if ((await s.events.readStream(subscriptionStream(subscriptionId))).length === 0) throw new TenancyError(`subscription ${subscriptionId} not found`);
        await s.projections.catchUp();
        const docs = await listDeliveriesOfSubscription(s.readModels, subscriptionId);
        const deliveries = docs.map((d) => ({
          webhookId: d.webhook_id,
          eventType: d.event_type,
          state: d.state,
          scheduledAt: d.scheduled_at,
          nextAttemptAt: d.next_attempt_at,
          attempts: d.attempts.map((a) => ({
            attempt: a.attempt,
            status: a.status,
            statusCode: a.status_code,
            error: a.error,
            durationMs: a.duration_ms,
            attemptedAt: a.attempted_at,
          })),
        }));
        const lines = [`${deliveries.length} deliveries for subscription ${subscriptionId}`];
        for (const d of deliveries) {
          lines.push(`${d.scheduledAt}  ${d.state.padEnd(9)} ${d.eventType}  ${d.webhookId}`);
          for (const a of d.attempts)
            lines.push(`    attempt ${a.attempt}  ${a.status}${a.statusCode !== null ? ` (${a.statusCode})` : ''}${a.error ? `  ${a.error}` : ''}  ${a.durationMs} ms  at ${a.attemptedAt}`);
          if (d.nextAttemptAt) lines.push(`    next attempt at ${d.nextAttemptAt}`);
        }
        print(json(), { subscriptionId, deliveries }, lines.join('\n'));
      }),
    );
}
