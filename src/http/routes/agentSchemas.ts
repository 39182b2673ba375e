import { z } from 'zod';
import { AGENT_KEYS } from '../../domain/agents.ts';
import { RUN_FAILURE_REASONS, RUN_STATUSES, RUN_TRIGGERS } from '../../domain/agentRun.ts';
import type { AgentRunDoc } from '../../readModels/agentRuns.ts';
import type { AgentView } from '../../readModels/agentViews.ts';

/** The agents API's objects, and the one mapping from each view or document to them. */

const isoTimestamp = z.string().meta({ format: 'date-time' });

export const runObject = z.object({
  id: z.string(),
  siteId: z.string(),
  agentKey: z.enum(AGENT_KEYS),
  trigger: z.enum(RUN_TRIGGERS),
  status: z.enum(RUN_STATUSES).meta({ description: 'queued → running → succeeded | failed' }),
  queuedAt: isoTimestamp,
  startedAt: isoTimestamp.nullable(),
  finishedAt: isoTimestamp.nullable(),
  attempt: z.number().int().meta({ description: 'a run left by a dead worker is started once more' }),
  counts: z.record(z.string(), z.number()).meta({ description: "the run's counted outputs" }),
  opportunityIds: z.array(z.string()),
  creditsUsed: z.number(),
  failureReason: z.enum(RUN_FAILURE_REASONS).nullable(),
  failureDetail: z.string().nullable(),
});

export const runOf = (r: AgentRunDoc): z.infer<typeof runObject> => ({
  id: r.id,
  siteId: r.siteId,
  agentKey: r.agentKey,
  trigger: r.trigger,
  status: r.status,
  queuedAt: r.queuedAt,
  startedAt: r.startedAt,
  finishedAt: r.finishedAt,
  attempt: r.attempt,
  counts: r.counts,
  opportunityIds: r.opportunityIds,
  creditsUsed: r.creditsUsed,
  failureReason: r.failureReason,
  failureDetail: r.failureDetail,
});

export const agentObject = z.object({
  agentKey: z.enum(AGENT_KEYS),
  template: z.string(),
  isActive: z.boolean(),
  planAllows: z.boolean().meta({ description: "whether the site's plan allows the agent (automations; Advanced for outreach)" }),
  cadenceHours: z.number().int().nullable().meta({ description: 'scheduled runs every this many hours while active; null: on demand only' }),
  settings: z.record(z.string(), z.unknown()),
  defaults: z.record(z.string(), z.unknown()),
  lastRun: runObject.nullable(),
  updatedAt: isoTimestamp.nullable(),
});

export const agentOf = (v: AgentView): z.infer<typeof agentObject> => ({ ...v, lastRun: v.lastRun ? runOf(v.lastRun) : null });
