import { randomUUID } from 'node:crypto';
import type { PageFetcher } from '../../ports/pageFetcher.ts';
import { pageFetcherFromConfig } from '../../adapters/http/safePageFetcher.ts';
import type { AgentWorkDeps, AgentWorkRegistry } from '../../agentWork/types.ts';
import { type AgentRunContext, assertWorkGates, completeAgentRun, failAgentRun, releaseAgentRun, renewAgentRunLease, startAgentRun } from '../../commands/agentRuns.ts';
import { aggregateStream } from '../../commands/aggregateStream.ts';
import { debitCredits } from '../../commands/credits.ts';
import { type AgentRunEvent, type AgentRunLedgerEvent, type RunFailureReason, RunHeldElsewhereError, RunLeaseLostError } from '../../domain/agentRun.ts';
import { type AgentKey, type AgentsState, settingsOf } from '../../domain/agents.ts';
import { type OpportunityProposal, proposalKey } from '../../domain/agentWork.ts';
import { type ErrorCode, ServiceError } from '../../domain/errors.ts';
import { type WorkSettingsSchemas, visibleSettingsOf } from '../../domain/agentSettingsSchemas.ts';
import { type EventSchemas, agentRunEventSchemas, agentRunLedgerEventSchemas } from '../../domain/eventSchemas.ts';
import type { Config } from '../../config.ts';
import { parseEvent } from '../../lib/parseEvent.ts';
import { sleep } from '../../lib/sleep.ts';
import { readPageOfTypes } from '../../lib/followLog.ts';
import { LazyCheckpoint, type StoreOutcome } from '../../lib/lazyCheckpoint.ts';
import type { AgentRefiner } from '../../ports/agentRefiner.ts';
import type { Mailer } from '../../ports/mailer.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import { agentRunsInStatus } from '../../readModels/agentRuns.ts';
import { articleInputsOf } from '../../readModels/articles.ts';
import { OPPORTUNITIES, type OpportunityDoc } from '../../readModels/opportunities.ts';
import { getSite } from '../../readModels/sites.ts';
import { inboxProjection } from '../../projections/inbox.ts';
import { scheduleDueRuns } from './scheduler.ts';

export const AGENT_RUNNER = 'agentRunner';
const AGENT_RUNNER_VERSION = 1;
const PAGE = 500;
const DETAIL_MAX = 500;
/** How often a run's recording looks whether the opportunities read model has caught up. */
const OPPORTUNITIES_POLL_MS = 20;

type Log = { error(obj: unknown, msg?: string): void; warn?(obj: unknown, msg?: string): void };

export interface AgentRunnerDeps extends AgentRunContext {
  config: Config;
  readModels: ReadModelStore;
  mailer: Mailer;
  /** The content agents' refiner (`createRefiner(config)`): offline identity, or the language model with fallback. */
  refiner: AgentRefiner;
  /** Each agent's work; null when none is installed (runs fail with `work_unavailable`). */
  registry: AgentWorkRegistry | null;
  workSettingsSchemas: WorkSettingsSchemas;
}

export interface AgentRunnerOptions {
  workerId: string;
  /** Runs executed at the same time by this worker. */
  concurrency: number;
  /** How long a started run is held without a renewal; renewed every third of it. */
  leaseMs: number;
  /**
   * How long one run may take (AGENT_RUN_MAX_MS): then its work is asked to stop, and what it did is
   * recorded as the run's result (an outreach run stops between prospects; the rest wait for the next
   * run). A slot of the runner, shared by every team, is not held for hours by one slow site.
   */
  maxRunMs?: number;
  /** How often scheduled runs are looked for. */
  scheduleIntervalMs: number;
  log?: Log;
}

type RunRef = { runId: string; siteId: string; teamId: string; agentKey: AgentKey };
/** A gate refused when the run starts: the failure reason recorded for each refusal. */
const GATE_FAILURES: Partial<Record<ErrorCode, Exclude<RunFailureReason, 'worker_lost'>>> = {
  SITE_NOT_FOUND: 'site_not_found',
  SITE_NOT_LICENSED: 'site_not_licensed',
  PLAN_REQUIRED: 'plan_required',
  AGENT_INACTIVE: 'agent_inactive',
  SENDING_DOMAIN_UNVERIFIED: 'sending_domain_unverified',
  INSUFFICIENT_CREDITS: 'insufficient_credits',
};

/** What one execution of the work came to, before the proposals the site has already are left out and it is recorded. */
type Outcome =
  | { ok: true; result: { proposals: OpportunityProposal[]; counts: Record<string, number>; creditsUsed: number } }
  | { ok: false; reason: Exclude<RunFailureReason, 'worker_lost'>; detail: string };
type FollowedEvent = Extract<AgentRunLedgerEvent, { type: 'AgentRunQueued' }> | Extract<AgentRunEvent, { type: 'AgentRunSucceeded' }>;
const followed: EventSchemas<FollowedEvent> = {
  AgentRunQueued: agentRunLedgerEventSchemas.AgentRunQueued,
  AgentRunSucceeded: agentRunEventSchemas.AgentRunSucceeded,
};
const FOLLOWED_TYPES = Object.keys(followed);

/**
 * The agent runner. It follows the global log from its checkpoint: each `AgentRunQueued` is taken
 * under a lease (`AgentRunStarted`) before the checkpoint passes it, then executed with the lease
 * renewed while the work runs; each `AgentRunSucceeded` debits the credits the run used (once per
 * run) before the checkpoint passes it. A sweep takes over runs whose worker stopped renewing (a
 * second attempt, then `worker_lost`), and a scheduler queues cadence runs through the same path.
 */
export class AgentRunner {
  private readonly instanceId: string;
  private readonly cp: LazyCheckpoint;
  private controller: AbortController | null = null;
  private loops: Promise<void>[] = [];
  /** Each run in flight (from the moment its slot is taken): when it ends, and its team. */
  private readonly inFlight = new Map<string, { done: Promise<void>; teamId: string }>();
  /** Queued runs this runner left for now because their team held its share of the slots (see `take`). */
  private readonly heldBack = new Map<string, RunRef>();
  /** `takeHeldBack` is going through them. */
  private retaking = false;
  /** The refusal code last logged per scheduled site and agent (see scheduleDueRuns). */
  private readonly scheduleRefusals = new Map<string, string>();
  /** Per site and agent, the recording of a run's result in progress: the next run's waits for it (see `record`). */
  private readonly recording = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: AgentRunnerDeps,
    private readonly options: AgentRunnerOptions,
  ) {
    this.instanceId = `${options.workerId}/${randomUUID()}`;
    this.cp = new LazyCheckpoint(deps.readModels, AGENT_RUNNER, AGENT_RUNNER_VERSION);
  }

  /** The lease holder's name on the run's stream: the worker and this process. */
  get holder(): string {
    return this.instanceId;
  }

  get position(): bigint {
    return this.cp.position;
  }

  async start(): Promise<void> {
    if (this.controller) return;
    this.controller = new AbortController();
    const stored = await this.deps.readModels.getCheckpoint(AGENT_RUNNER);
    if (!stored || stored.version !== AGENT_RUNNER_VERSION) {
      await this.deps.readModels.reset(AGENT_RUNNER, []);
      this.cp.at(-1n);
    } else this.cp.at(stored.position);
    const { signal } = this.controller;
    this.loops = [
      this.every(signal, 0, () => this.followLog(signal), 'following the log'),
      this.every(signal, Math.max(250, Math.floor(this.options.leaseMs / 2)), () => this.sweep(), 'sweeping abandoned runs'),
      this.every(signal, this.options.scheduleIntervalMs, async () => void (await scheduleDueRuns(this.deps, this.options.log, this.scheduleRefusals)), 'scheduling runs'),
    ];
  }

  /**
   * Stops following and scheduling; runs in flight are told to stop and, once their work has, given
   * back (`AgentRunReleased`: queued again, the sweep of any runner takes them). A runner that dies
   * instead leaves its runs to their lease.
   */
  async stop(): Promise<void> {
    this.controller?.abort();
    await Promise.all(this.loops);
    // Where it is, past other events only: else read again at the next start (nothing in them is acted on).
    await this.storeCheckpoint().catch((error: unknown) => this.options.log?.warn?.({ err: error }, 'agent runner checkpoint not stored at stop'));
    await Promise.allSettled(this.executions());
    this.loops = [];
    this.controller = null;
    await this.pageFetcher?.close();
    this.pageFetcher = null;
  }

  /** Resolves when the runner has passed `position` and finished the runs it took (tests). */
  async waitForPosition(position: bigint, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.cp.position < position) {
      if (Date.now() > deadline) return false;
      await sleep(5);
    }
    await Promise.allSettled(this.executions());
    return true;
  }

  private async every(signal: AbortSignal, intervalMs: number, fn: () => Promise<boolean | void>, what: string): Promise<void> {
    let backoff = 50;
    while (!signal.aborted) {
      try {
        const busy = await fn();
        backoff = 50;
        if (intervalMs > 0) await sleep(intervalMs, signal);
        else if (!busy) await this.deps.events.waitForNew(this.cp.position, 1_000, signal);
      } catch (error) {
        this.options.log?.error({ err: error }, `agent runner failed ${what}; retrying`);
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 5_000);
      }
    }
  }

  /**
   * One page of the global log's run events; false when there was nothing new. A page this runner
   * acted on moves the stored checkpoint before the next is read; one of only other events moves it
   * in memory (LazyCheckpoint: a busy log put a read-model commit on every append).
   */
  private async followLog(signal: AbortSignal): Promise<boolean> {
    const from = this.cp.position;
    const { page, to } = await readPageOfTypes(this.deps.events, from, PAGE, FOLLOWED_TYPES);
    if (to <= from) {
      await this.settle(await this.cp.idle());
      return false;
    }
    if (page.length === 0) {
      await this.settle(await this.cp.passed(to));
      return true;
    }
    for (const recorded of page) {
      if (signal.aborted) return true;
      const event = parseEvent(recorded, followed);
      if (!event) continue;
      if (event.type === 'AgentRunQueued') {
        await this.take(event.data, signal);
      } else if (event.data.creditsUsed > 0) {
        const { teamId, siteId, runId, creditsUsed } = event.data;
        await debitCredits(this.deps, { teamId, siteId, runId, amount: creditsUsed });
      }
    }
    // Stopped while a run waited for a slot (`take` gave up): the page is read again at the next start.
    if (signal.aborted) return true;
    // A page acted on is stored before the next is read; one that could not be is read (and acted on) again.
    this.cp.movedTo(to);
    try {
      await this.settle(await this.cp.store());
    } catch (error) {
      this.cp.movedTo(from);
      throw error;
    }
    return true;
  }

  /** Stores where it is (at stop). */
  private async storeCheckpoint(): Promise<void> {
    await this.settle(await this.cp.store());
  }

  /** Another copy that moved the stored checkpoint first: continue from where it is (what it took is its own; starts are decided per run). */
  private async settle(outcome: StoreOutcome): Promise<void> {
    if (outcome === 'lost') await this.cp.reload();
  }

  /** Runs whose worker stopped renewing its lease (or queued runs nobody took): taken over or failed. */
  private async sweep(): Promise<void> {
    const now = this.deps.clock.now().getTime();
    for (const status of ['running', 'queued'] as const) {
      for (const run of await agentRunsInStatus(this.deps.readModels, status, 100)) {
        if (this.inFlight.has(run.id)) continue;
        const abandoned = status === 'running' ? run.leaseExpiresAt !== null && Date.parse(run.leaseExpiresAt) <= now : Date.parse(run.queuedAt) + this.options.leaseMs <= now;
        if (abandoned) await this.take({ runId: run.id, siteId: run.siteId, teamId: run.teamId, agentKey: run.agentKey }, this.controller?.signal);
      }
    }
  }

  /** Starts the run under this worker's lease and executes it in the background; nothing when another holds it or it ended. */
  private executions(): Promise<void>[] {
    return [...this.inFlight.values()].map((f) => f.done);
  }

  private async take(run: RunRef, signal: AbortSignal | undefined): Promise<void> {
    const teamHolds = () => [...this.inFlight.values()].filter((f) => f.teamId === run.teamId).length;
    // A team holds every slot but one at most: the last is kept for another team's run queued after
    // (a team's two long runs held both slots, and another team's run waited 84 s, up to
    // AGENT_RUN_MAX_MS). Its run is held back, and taken again when one of this runner's runs ends.
    if (this.options.concurrency > 1 && teamHolds() >= this.options.concurrency - 1) return void this.heldBack.set(run.runId, run);
    while (this.inFlight.size >= this.options.concurrency) {
      if (signal?.aborted) return;
      // Every slot busy and this run's team holds one already: held back too, so the runs other
      // teams queued after it do not wait behind it.
      if (teamHolds() > 0) return void this.heldBack.set(run.runId, run);
      await Promise.race(this.executions());
    }
    if (signal?.aborted || this.inFlight.has(run.runId)) return;
    this.heldBack.delete(run.runId);
    // The slot is this run's from here, through the start's await: a take beside this one counts it.
    let free!: () => void;
    const freed = new Promise<void>((resolve) => (free = resolve));
    const release = () => {
      this.inFlight.delete(run.runId);
      free();
      // After the takes waiting for a slot (they resume on `free`): a held-back run goes after them.
      setImmediate(() => this.takeHeldBack());
    };
    this.inFlight.set(run.runId, { done: freed, teamId: run.teamId });
    let started: Awaited<ReturnType<typeof startAgentRun>>;
    try {
      started = await startAgentRun(this.deps, { run, workerId: this.holder, leaseMs: this.options.leaseMs });
    } catch (error) {
      release();
      if (error instanceof RunHeldElsewhereError) return;
      throw error;
    }
    const event = started.events[0];
    if (event?.type !== 'AgentRunStarted') return release(); // ended already, or failed as worker_lost
    void this.execute({ ...run, agentKey: event.data.agentKey }, event.data.attempt).finally(release);
  }

  /**
   * The runs held back, in the order they were, taken again one after another (the rules decide
   * anew) once a slot of this runner is free. A held-back run is still queued in the store: should
   * this runner stop first, the sweep of any runner takes it.
   */
  private takeHeldBack(): void {
    const signal = this.controller?.signal;
    if (!signal || signal.aborted || this.heldBack.size === 0 || this.retaking) return;
    this.retaking = true;
    void (async () => {
      try {
        for (const run of [...this.heldBack.values()]) {
          if (signal.aborted || this.inFlight.size >= this.options.concurrency) break;
          this.heldBack.delete(run.runId);
          await this.take(run, signal);
        }
      } catch (error) {
        this.options.log?.error({ err: error }, 'agent runner failed taking a held-back run; the sweep takes it');
      } finally {
        this.retaking = false;
      }
    })();
  }

  private async execute(run: RunRef, attempt: number): Promise<void> {
    const holder = { runId: run.runId, attempt, workerId: this.holder };
    const work = new AbortController();
    const stopped = this.controller?.signal;
    const onStop = () => work.abort(new Error('the runner is stopping'));
    stopped?.addEventListener('abort', onStop, { once: true });
    let overtime = false;
    const deadline = this.options.maxRunMs
      ? setTimeout(() => {
          overtime = true;
          work.abort(new Error(`the run took longer than AGENT_RUN_MAX_MS (${this.options.maxRunMs} ms)`));
        }, this.options.maxRunMs)
      : null;
    const renewal = setInterval(() => {
      renewAgentRunLease(this.deps, { ...holder, leaseMs: this.options.leaseMs }).catch((error: unknown) => {
        if (error instanceof RunLeaseLostError) work.abort(error);
        else this.options.log?.warn?.({ err: error }, 'renewing an agent run lease failed');
      });
    }, Math.max(100, Math.floor(this.options.leaseMs / 3)));
    try {
      const outcome = await this.work(run, work.signal);
      if (work.signal.aborted && !overtime) {
        // Stopping: the run is given back, queued again for any runner's sweep, and this attempt is
        // not counted (two deploys during one long run ended it worker_lost). Taken over: its new lease decides.
        if (stopped?.aborted) await releaseAgentRun(this.deps, holder);
        return;
      }
      if (outcome.ok) await this.record(run, holder, outcome.result);
      else await failAgentRun(this.deps, { ...holder, reason: outcome.reason, detail: outcome.detail.slice(0, DETAIL_MAX) });
    } catch (error) {
      if (error instanceof RunLeaseLostError) return;
      this.options.log?.error({ err: error }, 'recording an agent run failed');
    } finally {
      clearInterval(renewal);
      if (deadline) clearTimeout(deadline);
      stopped?.removeEventListener('abort', onStop);
    }
  }

  private pageFetcher: PageFetcher | null = null;

  /** One SSRF-safe HTTPS client for every run of this runner (its pool is reused), opened on first use. */
  private fetcher(): PageFetcher {
    this.pageFetcher ??= pageFetcherFromConfig(this.deps.config);
    return this.pageFetcher;
  }

  /**
   * Records a succeeded run with the proposals the site has no opportunity for yet. Two runs of one
   * agent on one site (a scheduled one and `run_agent`, say) find the same proposals: in this process
   * their recordings take turns, and each reads the opportunities only once the read model includes
   * the log as it stands, so the second run leaves out what the first recorded. (Runners in two
   * processes can still both record one within the read model's lag.)
   */
  private async record(run: RunRef, holder: { runId: string; attempt: number; workerId: string }, result: Extract<Outcome, { ok: true }>['result']): Promise<void> {
    const key = `${run.siteId}/${run.agentKey}`;
    const before = this.recording.get(key) ?? Promise.resolve();
    const mine = before.then(async () => {
      const fresh = await this.notProposedBefore(run, result.proposals);
      const counts = fresh.length < result.proposals.length ? { ...result.counts, alreadyProposed: result.proposals.length - fresh.length } : result.counts;
      // A pitch's opportunity exists already (its conversation opened it): the proposal is recorded under its id.
      const proposals = fresh.map((proposal) => ({ opportunityId: proposal.kind === 'outreach' ? proposal.opportunityId : this.deps.newId(), proposal }));
      await completeAgentRun(this.deps, { ...holder, proposals, counts, creditsUsed: result.creditsUsed });
    });
    const settled = mine.catch(() => {});
    this.recording.set(key, settled);
    try {
      await mine;
    } finally {
      if (this.recording.get(key) === settled) this.recording.delete(key);
    }
  }

  /**
   * The proposals the site has no opportunity for yet (`proposalKey`): a scheduled agent finds the
   * same links and topics again on every run. Read again after the work (not the set the work was
   * given), so what a run of the same agent recorded meanwhile counts too.
   */
  private async notProposedBefore(run: RunRef, proposals: OpportunityProposal[]): Promise<OpportunityProposal[]> {
    if (!proposals.some((p) => proposalKey(p) !== null)) return proposals;
    await this.opportunitiesInclude(await this.deps.events.headPosition());
    const seen = await this.knownProposals(run);
    return proposals.filter((p) => {
      const key = proposalKey(p);
      if (key === null) return true;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  /**
   * Until the opportunities read model includes `position`, READ_YOUR_WRITES_TIMEOUT_MS at most (then
   * as it is, with a warning); not past a stop of the runner (the projections may be stopping too).
   */
  private async opportunitiesInclude(position: bigint): Promise<void> {
    const deadline = Date.now() + this.deps.config.READ_YOUR_WRITES_TIMEOUT_MS;
    const stopping = this.controller?.signal;
    while (((await this.deps.readModels.getCheckpoint(inboxProjection.name))?.position ?? -1n) < position) {
      if (stopping?.aborted) return;
      if (Date.now() >= deadline) {
        this.options.log?.warn?.({ position: position.toString() }, 'the opportunities read model is behind; a proposal recorded just before may be recorded again');
        return;
      }
      await sleep(OPPORTUNITIES_POLL_MS, stopping);
    }
  }

  /** The keys of the site's opportunities of the run's kind (none for outreach, whose opportunities are its pitches'). */
  private async knownProposals(run: RunRef): Promise<Set<string>> {
    if (run.agentKey === 'outreach') return new Set();
    const existing = await this.deps.readModels.find<OpportunityDoc>(OPPORTUNITIES, { siteId: run.siteId, kind: run.agentKey });
    const keys = new Set<string>();
    for (const o of existing) {
      const key = o.details ? proposalKey(o.details) : null;
      if (key !== null) keys.add(key);
    }
    return keys;
  }

  private async work(run: RunRef, signal: AbortSignal): Promise<Outcome> {
    const site = await getSite(this.deps.readModels, run.siteId);
    if (!site) return { ok: false, reason: 'site_not_found', detail: `site ${run.siteId} not found` } satisfies Outcome;
    const work = this.deps.registry?.[run.agentKey];
    if (!work) return { ok: false, reason: 'work_unavailable', detail: `no work is installed for the agent ${run.agentKey}` } satisfies Outcome;
    // The gates again, as queuing checked them: the licence, the plan, the agent, the sending domain
    // or the team's credits (another run spent them) may have changed since.
    let state: AgentsState;
    try {
      state = (await assertWorkGates(this.deps, run.teamId, run.siteId, run.agentKey)).agents;
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      const reason = GATE_FAILURES[error.code];
      if (!reason) throw error;
      return { ok: false, reason, detail: error.message } satisfies Outcome;
    }
    const settings = visibleSettingsOf(run.agentKey, settingsOf(state, run.agentKey), this.deps.workSettingsSchemas);
    const known = await this.knownProposals(run);
    const deps: AgentWorkDeps = {
      commands: this.deps,
      readModels: this.deps.readModels,
      config: this.deps.config,
      mailer: this.deps.mailer,
      articles: (siteId) => articleInputsOf(this.deps.readModels, siteId),
      fetcher: this.fetcher(),
      refiner: this.deps.refiner,
      signal,
      proposedBefore: (p) => {
        const key = proposalKey(p);
        return key !== null && known.has(key);
      },
    };
    try {
      const result = await work({ ...run, siteDomain: site.domain, settings, now: this.deps.clock.now().toISOString() }, deps);
      return { ok: true, result: { proposals: result.proposals, counts: result.counts, creditsUsed: result.creditsUsed } } satisfies Outcome;
    } catch (error) {
      return { ok: false, reason: 'work_failed', detail: error instanceof Error ? error.message : String(error) } satisfies Outcome;
    }
  }
}
