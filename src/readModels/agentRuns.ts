import { decodeCursor, pageOf } from '../http/pagination.ts';
import type { AgentKey } from '../domain/agents.ts';
import type { QueuedRun, RunFailureReason, RunStatus, RunTrigger } from '../domain/agentRun.ts';
import type { Filter, PageQuery, ReadModelStore, SortValue } from '../ports/readModelStore.ts';

/** The `agentRuns` read model, written by the agentRuns projection: one document per run. */
export const AGENT_RUNS = 'agentRuns';

/** The runs list (newest first) by each of its filters, and the runner's sweep across sites by status (oldest first). */
export const AGENT_RUN_INDEXES = [
  ['siteId', 'queuedAt'],
  ['siteId', 'agentKey', 'queuedAt'],
  ['siteId', 'status', 'queuedAt'],
  ['status', 'queuedAt'],
] as const;

export interface AgentRunDoc {
  [key: string]: unknown;
  id: string;
  siteId: string;
  teamId: string;
  agentKey: AgentKey;
  trigger: RunTrigger;
  status: RunStatus;
  requestedBy: string | null;
  queuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  attempt: number;
  workerId: string | null;
  leaseExpiresAt: string | null;
  counts: Record<string, number>;
  opportunityIds: string[];
  creditsUsed: number;
  failureReason: RunFailureReason | null;
  failureDetail: string | null;
}

export const getAgentRun = (store: ReadModelStore, runId: string) => store.get<AgentRunDoc>(AGENT_RUNS, runId);

export interface AgentRunFilters {
  agentKey?: AgentKey;
  status?: RunStatus;
  queuedAfter?: string;
  queuedBefore?: string;
}

/** A page of the site's runs, newest first (queuedAt, then id); one extra to tell whether more follow. */
export function listAgentRunsPage(store: ReadModelStore, siteId: string, filters: AgentRunFilters, after: { value: SortValue; id: string } | null, limit: number) {
  const filter: Filter = { siteId };
  if (filters.agentKey !== undefined) filter.agentKey = filters.agentKey;
  if (filters.status !== undefined) filter.status = filters.status;
  const ranges: PageQuery['ranges'] = {};
  if (filters.queuedAfter !== undefined || filters.queuedBefore !== undefined) ranges.queuedAt = { gt: filters.queuedAfter, lt: filters.queuedBefore };
  return store.page<AgentRunDoc>(AGENT_RUNS, { filter, ranges, orderBy: 'queuedAt', direction: 'desc', after, limit: limit + 1 });
}

/** The agent's latest run on the site, or null. */
export async function lastAgentRun(store: ReadModelStore, siteId: string, agentKey: AgentKey): Promise<AgentRunDoc | null> {
  const [doc] = await listAgentRunsPage(store, siteId, { agentKey }, null, 0);
  return doc ?? null;
}

/** The agent's latest scheduled run on the site, or null (a filter beyond the index: an agent has a few runs a day at most). */
export async function lastScheduledRun(store: ReadModelStore, siteId: string, agentKey: AgentKey): Promise<AgentRunDoc | null> {
  const [doc] = await store.page<AgentRunDoc>(AGENT_RUNS, { filter: { siteId, agentKey, trigger: 'scheduled' }, orderBy: 'queuedAt', direction: 'desc', limit: 1 });
  return doc ?? null;
}

/** Runs in one status across every site (the runner's recovery sweep), oldest first. */
export const agentRunsInStatus = (store: ReadModelStore, status: RunStatus, limit: number) =>
  store.page<AgentRunDoc>(AGENT_RUNS, { filter: { status }, orderBy: 'queuedAt', direction: 'asc', limit });

/** A run as it is when queued (the projection's first document, and what a run request answers). */
export const queuedRunDoc = (d: QueuedRun): AgentRunDoc => ({
  id: d.runId,
  siteId: d.siteId,
  teamId: d.teamId,
  agentKey: d.agentKey,
  trigger: d.trigger,
  status: 'queued',
  requestedBy: d.requestedBy,
  queuedAt: d.queuedAt,
  startedAt: null,
  finishedAt: null,
  attempt: 0,
  workerId: null,
  leaseExpiresAt: null,
  counts: {},
  opportunityIds: [],
  creditsUsed: 0,
  failureReason: null,
  failureDetail: null,
});

/** `list_agent_runs` and GET .../agents/runs: a page of runs and the cursor of the next. */
export async function listAgentRuns(store: ReadModelStore, siteId: string, filters: AgentRunFilters, cursor: string | undefined, limit: number) {
  const docs = await listAgentRunsPage(store, siteId, filters, decodeCursor(cursor), limit);
  const page = pageOf(docs, limit, 'queuedAt');
  return { runs: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor };
}
