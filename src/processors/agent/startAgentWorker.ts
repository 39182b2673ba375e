import { hostname } from 'node:os';
import type { Config } from '../../config.ts';
import { claimWorkerIdentity } from '../../adapters/sqlite/workerIdentity.ts';
import { createDrafter } from '../../adapters/drafting/createDrafter.ts';
import { createTriage } from '../../adapters/triage/createTriage.ts';
import type { Mailer } from '../../ports/mailer.ts';
import type { Services } from '../../services.ts';
import { backgroundEventStore } from '../backgroundEventStore.ts';
import { type OutreachAgentOptions, OutreachAgentWorker } from './outreachAgentWorker.ts';

type Log = { error(obj: unknown, msg?: string): void; warn(obj: unknown, msg?: string): void };

export function agentOptionsFrom(config: Config, log?: Log): OutreachAgentOptions {
  return {
    workerId: config.AGENT_WORKER_ID ?? hostname(),
    concurrency: config.AGENT_CONCURRENCY,
    maxAttempts: config.AGENT_SEND_ATTEMPTS,
    baseMs: config.AGENT_RETRY_BASE_MS,
    factor: config.AGENT_RETRY_FACTOR,
    orphanAfterMs: config.AGENT_ORPHAN_AFTER_MS,
    log,
  };
}

export interface RunningAgent {
  worker: OutreachAgentWorker;
  mailer: Mailer;
  stop(): Promise<void>;
}

/**
 * Starts the Outreach Agent inside the given services (npm start, `outreach worker agent`). Without
 * AGENT_WORKER_ID it takes a name no other running agent worker on this host holds (see
 * claimWorkerIdentity), freed when it stops.
 */
export async function startAgentWorker(services: Services, log?: Log, overrides: { mailer?: Mailer } = {}): Promise<RunningAgent> {
  const { config } = services;
  // The process's one mailer (the API's replies share it), unless a test gives its own.
  const mailer = overrides.mailer ?? services.mailer;
  const deps = {
    ...services,
    events: backgroundEventStore(services.events),
    fromLocalPart: config.AGENT_FROM_LOCAL_PART,
    mailDomain: config.MAIL_DOMAIN,
    triage: createTriage(config, (err) => log?.warn({ err }, 'language-model triage failed; used the offline classifier')),
    drafter: createDrafter(config, (err) => log?.warn({ err }, 'language-model drafter failed; used the template')),
    mailer,
  };
  const options = agentOptionsFrom(config, log);
  const identity = config.AGENT_WORKER_ID ? null : claimWorkerIdentity(config.DATA_DIR, 'agent');
  const worker = new OutreachAgentWorker(deps, { ...options, ...(identity ? { workerId: identity.workerId } : {}) });
  try {
    await worker.start();
  } catch (error) {
    // A half-started worker may hold replies already: stopped before its name is free again.
    await worker.stop().catch(() => {});
    identity?.release();
    throw error;
  }
  return {
    worker,
    mailer,
    async stop() {
      try {
        await worker.stop();
      } finally {
        identity?.release();
      }
    },
  };
}
