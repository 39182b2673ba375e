import type { AgentRunEvent, AgentRunLedgerEvent } from '../domain/agentRun.ts';
import { type EventSchemas, agentRunEventSchemas, agentRunLedgerEventSchemas } from '../domain/eventSchemas.ts';
import { parseEvent } from '../lib/parseEvent.ts';
import { AGENT_RUNS, type AgentRunDoc, queuedRunDoc } from '../readModels/agentRuns.ts';
import { type Projection, handles } from './projection.ts';

const schemas: EventSchemas<Extract<AgentRunLedgerEvent, { type: 'AgentRunQueued' }> | AgentRunEvent> = {
  AgentRunQueued: agentRunLedgerEventSchemas.AgentRunQueued,
  ...agentRunEventSchemas,
};

/** Each agent run's state: queued (again, once released), running (with its lease), succeeded (counts, opportunities) or failed (reason). */
export const agentRunsProjection: Projection = {
  name: 'agentRuns',
  version: 1,
  collections: [AGENT_RUNS],
  canHandle: handles(['AgentRunQueued', 'AgentRunStarted', 'AgentRunLeaseRenewed', 'AgentRunReleased', 'AgentRunSucceeded', 'AgentRunFailed']),
  async handle(recorded, w) {
    const event = parseEvent(recorded, schemas);
    if (!event) return;
    if (event.type === 'AgentRunQueued') {
      const doc = queuedRunDoc(event.data);
      return w.put(AGENT_RUNS, doc);
    }
    const run = await w.get<AgentRunDoc>(AGENT_RUNS, event.data.runId);
    if (!run) return;
    switch (event.type) {
      case 'AgentRunStarted': {
        const { attempt, workerId, leaseExpiresAt, startedAt } = event.data;
        return w.put(AGENT_RUNS, { ...run, status: 'running', attempt, workerId, leaseExpiresAt, startedAt });
      }
      case 'AgentRunLeaseRenewed':
        return w.put(AGENT_RUNS, { ...run, leaseExpiresAt: event.data.leaseExpiresAt });
      case 'AgentRunReleased':
        // Queued again: a runner's sweep takes it (its attempt and start stay until the next start).
        return w.put(AGENT_RUNS, { ...run, status: 'queued', workerId: null, leaseExpiresAt: null });
      case 'AgentRunSucceeded': {
        const { counts, opportunityIds, creditsUsed, succeededAt } = event.data;
        return w.put(AGENT_RUNS, { ...run, status: 'succeeded', counts, opportunityIds, creditsUsed, finishedAt: succeededAt, leaseExpiresAt: null });
      }
      case 'AgentRunFailed': {
        const { reason, detail, failedAt } = event.data;
        return w.put(AGENT_RUNS, { ...run, status: 'failed', failureReason: reason, failureDetail: detail, finishedAt: failedAt, leaseExpiresAt: null });
      }
      case 'OpportunityProposed':
        return;
    }
  },
};
