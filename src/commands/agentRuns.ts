import {
  type AgentRunLedgerEvent,
  type QueuedRun,
  type RunFailureReason,
  type RunTrigger,
  type StoredProposal,
  HOUR_MS,
  RunLedgerClosedError,
  RunRateLimitedError,
  agentRunDecider,
  agentRunLedgerDecider,
  agentRunLedgerStream,
  agentRunStream,
  runLedgerHour,
} from '../domain/agentRun.ts';
import { type AgentKey, type AgentsState, AGENT_TEMPLATES, AUTOMATION_PLANS, agentGate, agentsDecider, agentsStream, planAllowsAgent, settingsOf } from '../domain/agents.ts';
import { type ServiceError, agentInactive, insufficientCredits, planRequired, rateLimited, sendingDomainUnverified, siteNotFound, siteNotLicensed } from '../domain/errors.ts';
import { type SiteSettings, siteDecider, siteStream } from '../domain/site.ts';
import { eventSchemasOf, parseEvent } from '../lib/parseEvent.ts';
import type { Config } from '../config.ts';
import { type AgentRunDoc, queuedRunDoc } from '../readModels/agentRuns.ts';
import { aggregateStream } from './aggregateStream.ts';
import { type CommandContext, onItsOwn } from './context.ts';
import { creditsOf } from './credits.ts';
import { handleCommand } from './handleCommand.ts';

/** What the run gates read besides the event store: the limit and whether credits are enforced. */
export interface AgentRunContext extends CommandContext {
  config: Pick<Config, 'AI_CREDITS_ENFORCED' | 'AGENT_RUNS_PER_HOUR'>;
}

export interface RequestAgentRunInput {
  teamId: string;
  siteId: string;
  agentKey: AgentKey;
  trigger: RunTrigger;
  /** Who asked: an API key id, an OAuth client id, a user id, or null (the scheduler). */
  requestedBy: string | null;
  /** Scheduled runs name their slot, so two schedulers cannot queue it twice; on-demand runs get a new id. */
  runId?: string;
}

/** The site's plan gate, in the spec's words: automations for every agent, Advanced for outreach. */
export function assertPlanAllows(plan: string, agentKey: AgentKey | null): void {
  const refusal = planRefusal(plan, agentKey);
  if (refusal) throw refusal;
}

/** The plan gate's refusal, in the spec's words; null when the plan allows the agent. */
function planRefusal(plan: string, agentKey: AgentKey | null): ServiceError | null {
  if (!AUTOMATION_PLANS.includes(plan)) return planRequired('Agent endpoints need a site on a plan with automations (Pro or Advanced).');
  if (agentKey && !planAllowsAgent(plan, agentKey)) return planRequired(`The ${AGENT_TEMPLATES[agentKey]} needs the Advanced plan.`);
  return null;
}

/**
 * The gates a run passes when it is queued and again when it starts (they may close in between), from
 * the site's and the agents' streams, in order: the site (SITE_NOT_FOUND), its licence
 * (SITE_NOT_LICENSED), the plan (PLAN_REQUIRED), the agent active (AGENT_INACTIVE). Returns the
 * site's agents and settings as their streams have them.
 */
export async function assertRunGates(ctx: Pick<AgentRunContext, 'events'>, siteId: string, agentKey: AgentKey): Promise<{ agents: AgentsState; site: SiteSettings }> {
  const { state: site } = await aggregateStream(ctx.events, siteStream(siteId), siteDecider);
  if (site.status !== 'exists') throw siteNotFound();
  const { state: agents } = await aggregateStream(ctx.events, agentsStream(siteId), agentsDecider);
  const closed = agentGate(site.settings, settingsOf(agents, agentKey), agentKey, 'run');
  if (closed === 'site_not_licensed') throw siteNotLicensed();
  if (closed === 'plan_excludes_agent') throw planRefusal(site.settings.plan, agentKey) ?? planRequired(`The site's plan has no ${AGENT_TEMPLATES[agentKey]}.`);
  if (closed === 'agent_inactive') throw agentInactive(agentKey);
  return { agents, site: site.settings };
}

/**
 * `assertRunGates`, then what the work itself needs: for the Outreach Agent the site's sending domain
 * verified (SENDING_DOMAIN_UNVERIFIED), and AI credits while enforced (INSUFFICIENT_CREDITS). Checked
 * when a run is queued and again when it starts (another run may have spent the credits meanwhile).
 */
export async function assertWorkGates(ctx: AgentRunContext, teamId: string, siteId: string, agentKey: AgentKey): Promise<{ agents: AgentsState; site: SiteSettings }> {
  const gates = await assertRunGates(ctx, siteId, agentKey);
  // Its run mails pitches from the site's domain: known now, it was a run queued, failed at once, and counted.
  if (agentKey === 'outreach' && !gates.site.sendingDomainVerified) {
    throw sendingDomainUnverified("The Outreach Agent mails pitches from the site's domain: verify its sending domain first (`outreach site verify-domain`).");
  }
  if (ctx.config.AI_CREDITS_ENFORCED) {
    const { balance } = await creditsOf(ctx, teamId);
    if (balance <= 0) throw insufficientCredits(balance);
  }
  return gates;
}

/**
 * Queues a run of one agent on one site: the one path for REST, MCP (`run_agent`), the CLI and the
 * scheduler. Gates in order: the site's licence (SITE_NOT_LICENSED), the plan (PLAN_REQUIRED), the agent active (AGENT_INACTIVE),
 * for the Outreach Agent the site's sending domain verified (SENDING_DOMAIN_UNVERIFIED), AI
 * credits while enforced (INSUFFICIENT_CREDITS), then, for on-demand runs, N per sliding hour per
 * site (RATE_LIMITED with the seconds until one is admitted). Returns the run as queued; `queued`
 * is false when a scheduled slot was already queued.
 */
export async function requestAgentRun(ctx: AgentRunContext, input: RequestAgentRunInput): Promise<{ run: AgentRunDoc; queued: boolean; position: bigint | null }> {
  await assertWorkGates(ctx, input.teamId, input.siteId, input.agentKey);

  const now = ctx.clock.now();
  const run: QueuedRun = {
    runId: input.runId ?? ctx.newId(),
    siteId: input.siteId,
    teamId: input.teamId,
    agentKey: input.agentKey,
    trigger: input.trigger,
    requestedBy: input.requestedBy,
    queuedAt: now.toISOString(),
  };
  let hour = runLedgerHour(now.getTime());
  // One more hour at most: this instance's clock may trail the one that closed this hour's ledger.
  for (let attempt = 0; ; attempt++) {
    const earlier = await closedLedgerOf(ctx, input.siteId, hour - 1, run.queuedAt);
    try {
      const result = await handleCommand(ctx, agentRunLedgerStream(input.siteId, hour), agentRunLedgerDecider, {
        type: 'QueueAgentRun',
        data: { run, earlier, limitPerHour: ctx.config.AGENT_RUNS_PER_HOUR },
      });
      return { run: queuedRunDoc(run), queued: result.events.length > 0, position: result.position };
    } catch (error) {
      if (error instanceof RunLedgerClosedError && attempt === 0) {
        hour += 1;
        continue;
      }
      if (error instanceof RunRateLimitedError) {
        throw rateLimited(error.retryAfterMs / 1000, `At most ${error.limit} on-demand agent runs per hour per site (REST and MCP together).`);
      }
      throw error;
    }
  }
}

/**
 * Closes the hour's ledger (once; a no-op after) and returns the runs it holds for good. The close is
 * the service's own bookkeeping, whichever request came first after the hour: it names no actor.
 */
async function closedLedgerOf(ctx: CommandContext, siteId: string, hour: number, now: string): Promise<QueuedRun[]> {
  await handleCommand(onItsOwn(ctx), agentRunLedgerStream(siteId, hour), agentRunLedgerDecider, { type: 'CloseAgentRunLedger', data: { siteId, hour, now } });
  return ledgerOf(ctx, siteId, hour);
}

async function ledgerOf(ctx: CommandContext, siteId: string, hour: number): Promise<QueuedRun[]> {
  const { state } = await aggregateStream(ctx.events, agentRunLedgerStream(siteId, hour), agentRunLedgerDecider);
  return [...state.runs];
}

/** On-demand runs the site may still start in the sliding hour (for views; the ledger decides). */
export async function onDemandRunsLeft(ctx: AgentRunContext, siteId: string): Promise<number> {
  const now = ctx.clock.now().getTime();
  const hour = runLedgerHour(now);
  const runs = [...(await ledgerOf(ctx, siteId, hour - 1)), ...(await ledgerOf(ctx, siteId, hour))];
  const used = runs.filter((r) => r.trigger === 'on_demand' && Date.parse(r.queuedAt) > now - HOUR_MS).length;
  return Math.max(0, ctx.config.AGENT_RUNS_PER_HOUR - used);
}

// ---- the runner's commands on one run's stream ----

type RunRef = { runId: string; siteId: string; teamId: string; agentKey: AgentKey };

/** Takes the run under a lease (first start, or a retry once the previous worker's lease expired). */
export async function startAgentRun(ctx: CommandContext, input: { run: RunRef; workerId: string; leaseMs: number }) {
  return handleCommand(ctx, agentRunStream(input.run.runId), agentRunDecider, {
    type: 'StartAgentRun',
    data: { ...input, now: ctx.clock.now().toISOString() },
  });
}

export async function renewAgentRunLease(ctx: CommandContext, input: { runId: string; attempt: number; workerId: string; leaseMs: number }) {
  return handleCommand(ctx, agentRunStream(input.runId), agentRunDecider, {
    type: 'RenewAgentRunLease',
    data: { ...input, now: ctx.clock.now().toISOString() },
  });
}

/** Gives the run back when the worker stops before it ended: queued again, this attempt not counted as lost. */
export async function releaseAgentRun(ctx: CommandContext, input: { runId: string; attempt: number; workerId: string }) {
  return handleCommand(ctx, agentRunStream(input.runId), agentRunDecider, {
    type: 'ReleaseAgentRun',
    data: { ...input, now: ctx.clock.now().toISOString() },
  });
}

/** Ends the run: one `OpportunityProposed` per proposal and `AgentRunSucceeded`, in one append. */
export async function completeAgentRun(
  ctx: CommandContext,
  input: { runId: string; attempt: number; workerId: string; proposals: StoredProposal[]; counts: Record<string, number>; creditsUsed: number },
) {
  const { runId, ...data } = input;
  return handleCommand(ctx, agentRunStream(runId), agentRunDecider, { type: 'CompleteAgentRun', data: { ...data, now: ctx.clock.now().toISOString() } });
}

export async function failAgentRun(ctx: CommandContext, input: { runId: string; attempt: number; workerId: string; reason: RunFailureReason; detail: string }) {
  const { runId, ...data } = input;
  return handleCommand(ctx, agentRunStream(runId), agentRunDecider, { type: 'FailAgentRun', data: { ...data, now: ctx.clock.now().toISOString() } });
}
