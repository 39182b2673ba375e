import type { AgentKey } from './agents.ts';
import type { OpportunityProposal } from './agentWork.ts';
import { type Decider, assertNever } from './decider.ts';

/**
 * Agent runs. A request is an `AgentRunQueued` fact in the site's hourly run ledger
 * (`agentRunRequests-<siteId>-<hour>`): the ledger decides the on-demand limit (N per sliding hour,
 * from this hour's and the previous hour's ledgers) with the append's expected revision, so it holds
 * across instances. The first request of an hour first closes the previous hour's ledger
 * (`AgentRunLedgerClosed`, appended with the revision it read): from then on nothing more is queued
 * there, so the runs this hour counts from it are all it will ever hold, even with an instance whose
 * clock is still in the previous hour (its request then goes to this hour's ledger). The run then
 * lives on its own stream (`agentRun-<runId>`): started under a lease by one worker, renewed while it
 * works, and ended once, succeeded with its opportunities or failed.
 */
export const RUN_TRIGGERS = ['on_demand', 'scheduled'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/**
 * From `site_not_found` on: a gate that closed between the queueing and the start (the site deleted,
 * the licence lapsed, the plan changed, the agent was turned off, the sending domain lost its
 * verification, another run spent the team's credits).
 */
export const RUN_FAILURE_REASONS = [
  'work_failed',
  'worker_lost',
  'work_unavailable',
  'site_not_found',
  'site_not_licensed',
  'plan_required',
  'agent_inactive',
  'sending_domain_unverified',
  'insufficient_credits',
] as const;
export type RunFailureReason = (typeof RUN_FAILURE_REASONS)[number];

/**
 * A run left by a dead worker is started once more; after that it fails (`worker_lost`). An attempt
 * its worker gave back when it stopped (`AgentRunReleased`) is not counted, up to MAX_RUN_RELEASES:
 * a run whose work makes its process be stopped each time (an eviction for its memory, say) ends.
 */
export const MAX_RUN_ATTEMPTS = 2;
export const MAX_RUN_RELEASES = 5;
export const HOUR_MS = 3_600_000;

export const runLedgerHour = (ms: number) => Math.floor(ms / HOUR_MS);
export const agentRunLedgerStream = (siteId: string, hour: number) => `agentRunRequests-${siteId}-${hour}`;
export const agentRunStream = (runId: string) => `agentRun-${runId}`;

export interface QueuedRun {
  runId: string;
  siteId: string;
  teamId: string;
  agentKey: AgentKey;
  trigger: RunTrigger;
  requestedBy: string | null;
  queuedAt: string;
}

// ---- the site's hourly run ledger ----

export type AgentRunLedgerEvent =
  | { type: 'AgentRunQueued'; data: QueuedRun }
  | { type: 'AgentRunLedgerClosed'; data: { siteId: string; hour: number; closedAt: string } };
export type AgentRunLedgerCommand =
  | {
      type: 'QueueAgentRun';
      data: {
        run: QueuedRun;
        /** The previous hour's ledger, closed: with this one it makes the sliding hour. */
        earlier: readonly QueuedRun[];
        limitPerHour: number;
      };
    }
  | { type: 'CloseAgentRunLedger'; data: { siteId: string; hour: number; now: string } };
export interface AgentRunLedgerState {
  runs: readonly QueuedRun[];
  closed: boolean;
}

/** The ledger was closed by a request of the next hour: queue in that hour's ledger instead. */
export class RunLedgerClosedError extends Error {
  constructor() {
    super('this hour of the run ledger is closed');
  }
}

export class RunRateLimitedError extends Error {
  constructor(
    readonly retryAfterMs: number,
    readonly limit: number,
  ) {
    super(`at most ${limit} on-demand agent runs per hour per site`);
  }
}

export const agentRunLedgerDecider: Decider<AgentRunLedgerState, AgentRunLedgerCommand, AgentRunLedgerEvent> = {
  initialState: () => ({ runs: [], closed: false }),
  evolve(state, event) {
    switch (event.type) {
      case 'AgentRunQueued':
        return { ...state, runs: [...state.runs, event.data] };
      case 'AgentRunLedgerClosed':
        return { ...state, closed: true };
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    if (command.type === 'CloseAgentRunLedger') {
      if (state.closed) return [];
      return [{ type: 'AgentRunLedgerClosed', data: { siteId: command.data.siteId, hour: command.data.hour, closedAt: command.data.now } }];
    }
    const { run, earlier, limitPerHour } = command.data;
    const all = [...earlier, ...state.runs];
    // A scheduled run's id names its slot: a second scheduler asking for the same slot gets nothing.
    if (all.some((r) => r.runId === run.runId)) return [];
    if (state.closed) throw new RunLedgerClosedError();
    if (run.trigger === 'on_demand') {
      const now = Date.parse(run.queuedAt);
      const inHour = all
        .filter((r) => r.trigger === 'on_demand' && Date.parse(r.queuedAt) > now - HOUR_MS)
        .map((r) => Date.parse(r.queuedAt))
        .sort((a, b) => a - b);
      if (inHour.length >= limitPerHour) {
        // Admitted again once enough of the hour's runs have slid out of it.
        const oldestThatMustLeave = inHour[inHour.length - limitPerHour]!;
        throw new RunRateLimitedError(oldestThatMustLeave + HOUR_MS - now, limitPerHour);
      }
    }
    return [{ type: 'AgentRunQueued', data: run }];
  },
};

// ---- one run ----

export interface StoredProposal {
  opportunityId: string;
  proposal: OpportunityProposal;
}

type RunRef = { runId: string; siteId: string; teamId: string; agentKey: AgentKey };

export type AgentRunEvent =
  | { type: 'AgentRunStarted'; data: RunRef & { attempt: number; workerId: string; leaseExpiresAt: string; startedAt: string } }
  | { type: 'AgentRunLeaseRenewed'; data: { runId: string; attempt: number; workerId: string; leaseExpiresAt: string; renewedAt: string } }
  /** The worker stopped (a graceful shutdown) before the run ended: the run is queued again, this attempt not counted. */
  | { type: 'AgentRunReleased'; data: { runId: string; attempt: number; workerId: string; releasedAt: string } }
  | { type: 'OpportunityProposed'; data: RunRef & StoredProposal & { proposedAt: string } }
  | {
      type: 'AgentRunSucceeded';
      data: RunRef & { attempt: number; counts: Record<string, number>; opportunityIds: string[]; creditsUsed: number; succeededAt: string };
    }
  | { type: 'AgentRunFailed'; data: RunRef & { attempt: number; reason: RunFailureReason; detail: string; failedAt: string } };

export type AgentRunCommand =
  | { type: 'StartAgentRun'; data: { run: RunRef; workerId: string; leaseMs: number; now: string } }
  | { type: 'RenewAgentRunLease'; data: { runId: string; attempt: number; workerId: string; leaseMs: number; now: string } }
  | { type: 'ReleaseAgentRun'; data: { runId: string; attempt: number; workerId: string; now: string } }
  | {
      type: 'CompleteAgentRun';
      data: { attempt: number; workerId: string; proposals: StoredProposal[]; counts: Record<string, number>; creditsUsed: number; now: string };
    }
  | { type: 'FailAgentRun'; data: { attempt: number; workerId: string; reason: RunFailureReason; detail: string; now: string } };

/** `released`: how many of the attempts so far their workers gave back (not lost). */
export type AgentRunState =
  | { status: 'none' }
  | { status: 'running'; run: RunRef; attempt: number; released: number; workerId: string; leaseExpiresAt: string }
  | { status: 'released'; run: RunRef; attempt: number; released: number }
  | { status: 'succeeded'; run: RunRef }
  | { status: 'failed'; run: RunRef };

/** The worker no longer holds the run (its lease expired and another took it, or the run ended). */
export class RunLeaseLostError extends Error {}
/** Another worker holds a live lease on the run. */
export class RunHeldElsewhereError extends Error {}

const leaseUntil = (now: string, leaseMs: number) => new Date(Date.parse(now) + leaseMs).toISOString();

function holding(state: AgentRunState, attempt: number, workerId: string): Extract<AgentRunState, { status: 'running' }> {
  if (state.status !== 'running' || state.attempt !== attempt || state.workerId !== workerId) {
    throw new RunLeaseLostError(`run is no longer held by ${workerId} (attempt ${attempt})`);
  }
  return state;
}

export const agentRunDecider: Decider<AgentRunState, AgentRunCommand, AgentRunEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'AgentRunStarted': {
        const { runId, siteId, teamId, agentKey, attempt, workerId, leaseExpiresAt } = event.data;
        const released = state.status === 'running' || state.status === 'released' ? state.released : 0;
        return { status: 'running', run: { runId, siteId, teamId, agentKey }, attempt, released, workerId, leaseExpiresAt };
      }
      case 'AgentRunLeaseRenewed':
        return state.status === 'running' ? { ...state, leaseExpiresAt: event.data.leaseExpiresAt } : state;
      case 'AgentRunReleased':
        return state.status === 'running' ? { status: 'released', run: state.run, attempt: state.attempt, released: state.released + 1 } : state;
      case 'OpportunityProposed':
        return state;
      case 'AgentRunSucceeded':
        return state.status === 'running' ? { status: 'succeeded', run: state.run } : state;
      case 'AgentRunFailed':
        return state.status === 'running' || state.status === 'released' || state.status === 'none' ? { status: 'failed', run: runRefOf(event.data) } : state;
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'StartAgentRun': {
        const { run, workerId, leaseMs, now } = command.data;
        if (state.status === 'succeeded' || state.status === 'failed') return [];
        if (state.status === 'none') {
          // The run's reference only: the caller's run may carry its queued fields (trigger, requestedBy), recorded by AgentRunQueued.
          const { runId, siteId, teamId, agentKey } = run;
          return [{ type: 'AgentRunStarted', data: { runId, siteId, teamId, agentKey, attempt: 1, workerId, leaseExpiresAt: leaseUntil(now, leaseMs), startedAt: now } }];
        }
        if (state.status === 'running') {
          if (Date.parse(state.leaseExpiresAt) > Date.parse(now)) throw new RunHeldElsewhereError(`run is held by ${state.workerId} until ${state.leaseExpiresAt}`);
          if (state.attempt - state.released >= MAX_RUN_ATTEMPTS) {
            const detail = `the worker ${state.workerId} stopped renewing its lease on attempt ${state.attempt} of ${MAX_RUN_ATTEMPTS + state.released}`;
            return [{ type: 'AgentRunFailed', data: { ...state.run, attempt: state.attempt, reason: 'worker_lost', detail, failedAt: now } }];
          }
        }
        if (state.status === 'released' && state.released >= MAX_RUN_RELEASES) {
          const detail = `the run's workers were stopped ${state.released} times before it ended`;
          return [{ type: 'AgentRunFailed', data: { ...state.run, attempt: state.attempt, reason: 'worker_lost', detail, failedAt: now } }];
        }
        const attempt = state.attempt + 1;
        return [{ type: 'AgentRunStarted', data: { ...state.run, attempt, workerId, leaseExpiresAt: leaseUntil(now, leaseMs), startedAt: now } }];
      }
      case 'RenewAgentRunLease': {
        const { runId, attempt, workerId, leaseMs, now } = command.data;
        holding(state, attempt, workerId);
        return [{ type: 'AgentRunLeaseRenewed', data: { runId, attempt, workerId, leaseExpiresAt: leaseUntil(now, leaseMs), renewedAt: now } }];
      }
      case 'CompleteAgentRun': {
        const { attempt, workerId, proposals, counts, creditsUsed, now } = command.data;
        const { run } = holding(state, attempt, workerId);
        return [
          ...proposals.map((p): AgentRunEvent => ({ type: 'OpportunityProposed', data: { ...run, ...p, proposedAt: now } })),
          { type: 'AgentRunSucceeded', data: { ...run, attempt, counts, opportunityIds: proposals.map((p) => p.opportunityId), creditsUsed, succeededAt: now } },
        ];
      }
      case 'ReleaseAgentRun': {
        const { runId, attempt, workerId, now } = command.data;
        const held = holding(state, attempt, workerId);
        // Its lease ran out first (the work hung past it): lost, as the sweep will count it.
        if (Date.parse(held.leaseExpiresAt) <= Date.parse(now)) return [];
        return [{ type: 'AgentRunReleased', data: { runId, attempt, workerId, releasedAt: now } }];
      }
      case 'FailAgentRun': {
        const { attempt, workerId, reason, detail, now } = command.data;
        const { run } = holding(state, attempt, workerId);
        return [{ type: 'AgentRunFailed', data: { ...run, attempt, reason, detail, failedAt: now } }];
      }
      default:
        return assertNever(command);
    }
  },
};

const runRefOf = (d: RunRef): RunRef => ({ runId: d.runId, siteId: d.siteId, teamId: d.teamId, agentKey: d.agentKey });
