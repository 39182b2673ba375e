import { z } from 'zod';
import { type AgentKey, type AgentSettings, CADENCE_HOURS_MAX, REPLY_TONES } from './agents.ts';
import { unknownSetting, validationError } from './errors.ts';

/** Each agent's work settings (src/agentWork/settings.ts): every field has a default, so `parse({})` gives them all. */
export type WorkSettingsSchemas = { readonly [K in AgentKey]: z.ZodObject };

/** The Outreach Agent's reply settings: kept as top-level agent settings (the inbox agent reads them there). */
const outreachReplyFields = {
  autoReply: z.boolean(),
  senderName: z.string().trim().max(120).nullable().transform((v) => (v === '' ? null : v)),
  signature: z.string().trim().max(1000).nullable().transform((v) => (v === '' ? null : v)),
  tone: z.enum(REPLY_TONES),
  declineReplies: z.boolean(),
};
const REPLY_KEYS = Object.keys(outreachReplyFields) as (keyof typeof outreachReplyFields)[];

/** Outbound discovery's limits, part of the outreach agent's work settings (the work's own schema may refine them). */
const outreachWorkBase = z.object({
  dailySendCap: z.number().int().min(0).max(1_000).default(20).meta({ description: 'cold pitches sent per site per day at most' }),
  prospectCriteria: z
    .object({
      keywords: z.array(z.string().trim().min(1).max(100)).max(50).default([]),
      maxProspectsPerRun: z.number().int().min(1).max(500).default(25),
    })
    .strict()
    .default({ keywords: [], maxProspectsPerRun: 25 }),
});

/** The work settings schema of one agent: for outreach the discovery limits, with the work's own fields winning a name clash. */
export function workSchemaOf(key: AgentKey, schemas: WorkSettingsSchemas): z.ZodObject {
  return key === 'outreach' ? outreachWorkBase.extend(schemas.outreach.shape) : schemas[key];
}

const onlyKnown = (values: Record<string, unknown>, schema: z.ZodObject) =>
  Object.fromEntries(Object.entries(values).filter(([k]) => Object.hasOwn(schema.shape, k)));

/** The agent's work settings with defaults filled in; stored values that no longer fit give way to defaults. */
export function workSettingsOf(key: AgentKey, stored: AgentSettings, schemas: WorkSettingsSchemas): Record<string, unknown> {
  const schema = workSchemaOf(key, schemas);
  const defaults = schema.parse({}) as Record<string, unknown>;
  const result: Record<string, unknown> = { ...defaults };
  for (const [k, v] of Object.entries(onlyKnown(stored.workSettings, schema))) {
    const one = schema.safeParse({ ...defaults, [k]: v });
    if (one.success) result[k] = (one.data as Record<string, unknown>)[k];
  }
  return result;
}

/**
 * Everything shown as an agent's `settings` and given to its runs: for outreach the reply settings
 * too. A PUT stores `senderName` and `signature` as reply settings (the inbox agent reads them
 * there), so they win over the outbound work's fields of the same name, whose values stay defaults.
 */
export function visibleSettingsOf(key: AgentKey, stored: AgentSettings, schemas: WorkSettingsSchemas): Record<string, unknown> {
  const work = workSettingsOf(key, stored, schemas);
  if (key !== 'outreach') return work;
  const reply = Object.fromEntries(REPLY_KEYS.map((k) => [k, stored[k]]));
  return { ...work, ...reply };
}

export const cadenceHours = z.number().int().min(1).max(CADENCE_HOURS_MAX).nullable();

/** The body of PUT .../agents/{agentKey}: every field optional; `settings` holds only the keys to change. */
export interface AgentUpdate {
  isActive?: boolean;
  cadenceHours?: number | null;
  settings?: Record<string, unknown>;
}
const UPDATE_KEYS = ['isActive', 'cadenceHours', 'settings'];

const describe = (error: z.ZodError, prefix: string) =>
  error.issues.map((i) => `${[prefix, ...i.path.map(String)].filter(Boolean).join('.')}: ${i.message}`).join('; ');

/**
 * The changes a PUT makes, checked against the agent's schema: UNKNOWN_SETTING for a key the agent
 * does not have (top level or in `settings`), VALIDATION_ERROR for a value that does not fit.
 */
export function parseAgentUpdate(key: AgentKey, body: Record<string, unknown>, stored: AgentSettings, schemas: WorkSettingsSchemas): Partial<AgentSettings> {
  const unknownTop = Object.keys(body).filter((k) => !UPDATE_KEYS.includes(k));
  if (unknownTop.length > 0) throw unknownSetting(key, unknownTop);
  const top = z
    .object({ isActive: z.boolean().optional(), cadenceHours: cadenceHours.optional(), settings: z.record(z.string(), z.unknown()).optional() })
    .safeParse(body);
  if (!top.success) throw validationError(describe(top.error, 'body'));
  const changes: Partial<AgentSettings> = {};
  if (top.data.isActive !== undefined) changes.active = top.data.isActive;
  if (top.data.cadenceHours !== undefined) changes.cadenceHours = top.data.cadenceHours;
  const settings = top.data.settings ?? {};

  const workSchema = workSchemaOf(key, schemas);
  const replyKeys: readonly string[] = key === 'outreach' ? REPLY_KEYS : [];
  const unknown = Object.keys(settings).filter((k) => !replyKeys.includes(k) && !Object.hasOwn(workSchema.shape, k));
  if (unknown.length > 0) throw unknownSetting(key, unknown);

  const replyGiven = Object.fromEntries(Object.entries(settings).filter(([k]) => replyKeys.includes(k)));
  const reply = z.object(outreachReplyFields).partial().safeParse(replyGiven);
  if (!reply.success) throw validationError(describe(reply.error, 'settings'));
  Object.assign(changes, reply.data);

  const workGiven = Object.keys(settings).filter((k) => !replyKeys.includes(k));
  if (workGiven.length > 0) {
    const merged = { ...onlyKnown(stored.workSettings, workSchema), ...Object.fromEntries(workGiven.map((k) => [k, settings[k]])) };
    const work = workSchema.safeParse(merged);
    if (!work.success) throw validationError(describe(work.error, 'settings'));
    const parsed = work.data as Record<string, unknown>;
    changes.workSettings = Object.fromEntries(workGiven.map((k) => [k, parsed[k]]));
  }
  return changes;
}

/** Defaults of every agent's visible settings (GET shows them next to the values). */
export const defaultSettingsOf = (key: AgentKey, defaults: AgentSettings, schemas: WorkSettingsSchemas) => visibleSettingsOf(key, defaults, schemas);

