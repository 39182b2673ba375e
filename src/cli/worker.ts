import type { Command } from 'commander';
import { startAgentWorker } from '../processors/agent/startAgentWorker.ts';
import { startAgentRunner } from '../processors/agentRuns/startAgentRunner.ts';
import type { Services } from '../services.ts';
import { assertSecretKeyOpens } from '../lifecycle/secretKeyCheck.ts';
import { print } from './output.ts';
import { untilInterrupted } from './untilInterrupted.ts';
import { startWorkerProjections } from './workerProjections.ts';
import { type WorkerMetricsOptions, metricsOptions, startWorkerMetrics } from './workerMetrics.ts';

type WithServices = <T>(fn: (services: Services) => Promise<T>) => Promise<T>;

const stderrLog = {
  error: (obj: unknown, msg?: string) => process.stderr.write(`${msg ?? 'error'}: ${String((obj as { err?: Error }).err?.message ?? '')}\n`),
  warn: (obj: unknown, msg?: string) => process.stderr.write(`${msg ?? 'warning'}: ${String((obj as { err?: Error }).err?.message ?? '')}\n`),
};

/**
 * `outreach worker agent`: the Outreach Agent as its own process (API nodes then run with RUN_AGENT=false);
 * `outreach worker agent-runs`: the agent runner likewise (RUN_AGENT_RUNNER=false on the API nodes).
 */
export function registerAgentWorkerCommand(program: Command, json: () => boolean, withServices: WithServices): void {
  const worker = program.commands.find((c) => c.name() === 'worker') ?? program.command('worker').description('run one background role as its own process');
  metricsOptions(worker.command('agent'))
    .description('run the Outreach Agent until interrupted (several copies may run at once)')
    .action(async (options: WorkerMetricsOptions) =>
      withServices(async (s) => {
        // Its mail's bounce addresses are tagged with this key: another key than the mailbox's makes every bounce 550.
        await assertSecretKeyOpens(s);
        const projections = startWorkerProjections(s, (err) => stderrLog.error({ err }, 'following the projections failed'));
        const agent = await startAgentWorker(s, stderrLog);
        const metrics = await startWorkerMetrics(s, options);
        if (metrics) metrics.metrics.sources.agent = agent.worker;
        print(json(), { worker: 'agent', started: true, workerId: agent.worker.workerId }, `outreach agent ${agent.worker.workerId} running; Ctrl-C stops it`);
        await untilInterrupted();
        await metrics?.close();
        await agent.stop();
        await projections.stop();
      }),
    );
  metricsOptions(worker.command('agent-runs'))
    .description('run the agent runner (queued and scheduled agent runs) until interrupted (several copies may run at once)')
    .action(async (options: WorkerMetricsOptions) =>
      withServices(async (s) => {
        // Pitches' bounce addresses are tagged with this key too.
        await assertSecretKeyOpens(s);
        const projections = startWorkerProjections(s, (err) => stderrLog.error({ err }, 'following the projections failed'));
        const runner = await startAgentRunner(s, stderrLog);
        const metrics = await startWorkerMetrics(s, options);
        print(json(), { worker: 'agent-runs', started: true, workerId: runner.runner.holder }, 'agent runner running; Ctrl-C stops it');
        await untilInterrupted();
        await metrics?.close();
        await runner.stop();
        await projections.stop();
      }),
    );
}
