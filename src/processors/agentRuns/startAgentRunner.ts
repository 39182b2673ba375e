import { hostname } from 'node:os';
import { createRefiner } from '../../adapters/refining/createRefiner.ts';
import type { AgentWorkWiring } from '../../agentWorkWiring.ts';
import type { Services } from '../../services.ts';
import { backgroundEventStore } from '../backgroundEventStore.ts';
import { AgentRunner } from './agentRunner.ts';

type Log = { error(obj: unknown, msg?: string): void; warn(obj: unknown, msg?: string): void };

export interface RunningAgentRunner {
  runner: AgentRunner;
  stop(): Promise<void>;
}

/**
 * Starts the agent runner inside the given services (npm start with RUN_AGENT_RUNNER, `outreach
 * worker agent-runs`). The agents' work comes from `services.agentWork` (src/agentWorkWiring.ts,
 * the merge point), unless `agentWork` is given (tests).
 */
export async function startAgentRunner(services: Services, log?: Log, options: { agentWork?: AgentWorkWiring; workerId?: string } = {}): Promise<RunningAgentRunner> {
  const { config } = services;
  const agentWork = options.agentWork ?? services.agentWork;
  const runner = new AgentRunner(
    {
      events: backgroundEventStore(services.events),
      clock: services.clock,
      secrets: services.secrets,
      newId: () => services.newId(),
      config,
      readModels: services.readModels,
      // The process's one mailer, opened when a run first sends.
      get mailer() {
        return services.mailer;
      },
      refiner: createRefiner(config, (err, agentKey) => log?.warn({ err, agentKey }, 'language-model refinement failed; the heuristic proposals were kept')),
      registry: agentWork.registry,
      workSettingsSchemas: agentWork.workSettingsSchemas,
    },
    {
      workerId: options.workerId ?? config.AGENT_RUNNER_WORKER_ID ?? hostname(),
      concurrency: config.AGENT_RUN_CONCURRENCY,
      leaseMs: config.AGENT_RUN_LEASE_MS,
      maxRunMs: config.AGENT_RUN_MAX_MS,
      scheduleIntervalMs: config.AGENT_SCHEDULE_INTERVAL_MS,
      log,
    },
  );
  await runner.start();
  return { runner, stop: () => runner.stop() };
}
