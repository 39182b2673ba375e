import type { DeliveryStatus } from '../domain/webhookDelivery.ts';
import type { Role } from '../lifecycle/shutdown.ts';
import type { MetricsSources } from '../http/metrics.ts';
import type { RunningProjections } from '../projections/startProjections.ts';
import type { Services } from '../services.ts';
import { startAgentWorker } from './agent/startAgentWorker.ts';
import { startAgentRunner } from './agentRuns/startAgentRunner.ts';
import { startBackgroundThread } from './backgroundThread.ts';
import { startWebhookWorker } from './webhookDelivery/startWorker.ts';

type Log = { error(obj: unknown, msg?: string): void; warn(obj: unknown, msg?: string): void };

export interface RunningBackgroundRoles {
  mode: 'thread' | 'in-process' | 'none';
  /** What /metrics reads of the roles. */
  sources: MetricsSources;
  /** How the graceful shutdown stops them. */
  roles: Role[];
}

/**
 * Starts the webhook delivery worker (RUN_WEBHOOKS), the Outreach Agent (RUN_AGENT) and the agent runner (RUN_AGENT_RUNNER) for
 * `npm start`: in their own worker thread when WORKERS_IN_THREAD is set, the projections run in
 * their thread and both stores are the embedded SQLite ones; otherwise on this event loop.
 */
export async function startBackgroundRoles(
  services: Services,
  projections: RunningProjections | null,
  hooks: { log: Log; onAttempt?: (status: DeliveryStatus) => void },
): Promise<RunningBackgroundRoles> {
  const { config } = services;
  const roles = { webhooks: config.RUN_WEBHOOKS, agent: config.RUN_AGENT, runner: config.RUN_AGENT_RUNNER };
  if (!roles.webhooks && !roles.agent && !roles.runner) return { mode: 'none', sources: {}, roles: [] };
  // A projection thread runs only on the embedded SQLite stores (`canRunInThread`), which this thread needs too.
  if (config.WORKERS_IN_THREAD && projections?.thread) {
    const thread = await startBackgroundThread(services, projections.thread, roles, hooks);
    return {
      mode: 'thread',
      sources: { webhooks: thread.webhooks ?? undefined, agent: thread.agent ?? undefined },
      roles: [{ name: 'webhook delivery and agents thread', stop: (drainMs) => thread.stop(drainMs) }],
    };
  }
  const webhooks = roles.webhooks ? await startWebhookWorker(services, hooks.log, { onAttempt: hooks.onAttempt }) : null;
  const agent = roles.agent ? await startAgentWorker(services, hooks.log) : null;
  const runner = roles.runner ? await startAgentRunner(services, hooks.log) : null;
  return {
    mode: 'in-process',
    sources: { webhooks: webhooks ?? undefined, agent: agent?.worker },
    roles: [
      ...(webhooks ? [{ name: 'webhook delivery', stop: (drainMs: number) => webhooks.stop(drainMs) }] : []),
      ...(agent ? [{ name: 'agent', stop: () => agent.stop() }] : []),
      ...(runner ? [{ name: 'agent runner', stop: () => runner.stop() }] : []),
    ],
  };
}
