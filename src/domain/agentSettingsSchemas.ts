import { z } from 'zod';
import { type AgentKey, type AgentSettings, CADENCE_HOURS_MAX, REPLY_TONES, SIGNATURE_MAX_LENGTH } from './agents.ts';
import { unknownSetting, validationError } from './errors.ts';
import { CLEAN_TEXT_MESSAGE, DISPLAY_NAME_MESSAGE, ONE_LINE_TEXT_MESSAGE, isCleanText, isDisplayName, isOneLineText } from './text.ts';

/** Each agent's work settings (src/agentWork/settings.ts): every field has a default, so `parse({})` gives them all. */
export type WorkSettingsSchemas = { readonly [K in AgentKey]: z.ZodObject };

/** The Outreach Agent's reply settings: kept as top-level agent settings (the inbox agent reads them there). */
const outreachReplyFields = {
  autoReply: z.boolean(),
  // The display name of the From header of every mail the agent sends: a name the prospect must trust.
  senderName: z.string().trim().max(120).refine(isDisplayName, DISPLAY_NAME_MESSAGE).nullable().transform((v) => (v === '' ? null : v)),
  signature: z.string().trim().max(SIGNATURE_MAX_LENGTH).refine(isCleanText, CLEAN_TEXT_MESSAGE).nullable().transform((v) => (v === '' ? null : v)),
  tone: z.enum(REPLY_TONES),
  declineReplies: z.boolean(),
};
const REPLY_KEYS = Object.keys(outreachReplyFields) as (keyof typeof outreachReplyFields)[];

export const DEFAULT_MAX_PROSPECTS_PER_RUN = 25;
/** Prospects looked at per run (each costs a few page fetches): the one definition, used by the API's schema and the outreach work's. */
export const maxProspectsPerRunSetting = z
  .number()
  .int()
  .min(1)
  .max(200)
  .default(DEFAULT_MAX_PROSPECTS_PER_RUN)
  .meta({ description: 'prospects looked at per outreach run at most' });

/** Cold pitches a site may send per UTC day, all runs together: the one definition, used by the API's schema and the outreach work's. */
export const dailySendCapSetting = z.number().int().min(0).max(500).default(20).meta({ description: 'cold pitches sent per site per UTC day at most' });

/** Outbound discovery's limits, part of the outreach agent's work settings (the work's own schema may refine them). */
const outreachWorkBase = z.object({
  dailySendCap: dailySendCapSetting,
  maxProspectsPerRun: maxProspectsPerRunSetting,
  prospectCriteria: z
    .object({ keywords: z.array(z.string().trim().min(1).max(100).refine(isOneLineText, ONE_LINE_TEXT_MESSAGE)).max(50).default([]) })
    .strict()
    .default({ keywords: [] }),
});

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `prospectCriteria.maxProspectsPerRun`, the outreach agent's second per-run limit until the two
 * were made one (the lower of the two applied), folded into `maxProspectsPerRun`: the lower of it
 * and the top-level value (`fallbackMax` when that is not set) becomes the top-level value, and
 * the criteria lose it. Stored `AgentConfigured` events and PUT bodies may still carry it. The
 * same object comes back when there is nothing to fold.
 */
export function foldLegacyProspectLimit(work: Record<string, unknown>, fallbackMax: number): Record<string, unknown> {
  const criteria = work.prospectCriteria;
  if (!isRecord(criteria) || !Object.hasOwn(criteria, 'maxProspectsPerRun')) return work;
  const { maxProspectsPerRun: legacy, ...rest } = criteria;
  // Criteria that held the limit alone are no criteria given: `{}` would replace the stored keywords.
  const { prospectCriteria: _criteria, ...others } = work;
  const folded: Record<string, unknown> = Object.keys(rest).length > 0 ? { ...work, prospectCriteria: rest } : others;
  if (typeof legacy === 'number' && Number.isInteger(legacy) && legacy >= 1) {
    const top = typeof work.maxProspectsPerRun === 'number' ? work.maxProspectsPerRun : fallbackMax;
    folded.maxProspectsPerRun = Math.min(top, legacy);
  }
  return folded;
}

/** An agent's stored work settings as they are read today (for outreach, the legacy per-run limit folded in). */
const storedWorkOf = (key: AgentKey, stored: AgentSettings) =>
  key === 'outreach' ? foldLegacyProspectLimit(stored.workSettings, DEFAULT_MAX_PROSPECTS_PER_RUN) : stored.workSettings;

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
  for (const [k, v] of Object.entries(onlyKnown(storedWorkOf(key, stored), schema))) {
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

/** UNKNOWN_SETTING naming the keys a nested setting does not have (`prospectCriteria.bogus`), if that is what was wrong. */
function unknownNestedSettings(key: AgentKey, error: z.ZodError) {
  const keys = error.issues.flatMap((i) => (i.code === 'unrecognized_keys' ? i.keys.map((k) => [...i.path.map(String), k].join('.')) : []));
  return keys.length > 0 ? unknownSetting(key, keys) : null;
}

/**
 * The changes a PUT makes, checked against the agent's schema: UNKNOWN_SETTING for a key the agent
 * does not have (top level, in `settings` or nested in a setting), VALIDATION_ERROR for a value that does not fit.
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
  const storedWork = storedWorkOf(key, stored);
  const given = top.data.settings ?? {};
  const current = typeof storedWork.maxProspectsPerRun === 'number' ? storedWork.maxProspectsPerRun : DEFAULT_MAX_PROSPECTS_PER_RUN;
  if (key === 'outreach' && isRecord(given.prospectCriteria) && Object.hasOwn(given.prospectCriteria, 'maxProspectsPerRun')) {
    const legacy = z.number().int().min(1).safeParse(given.prospectCriteria.maxProspectsPerRun);
    if (!legacy.success) throw validationError(describe(legacy.error, 'settings.prospectCriteria.maxProspectsPerRun'));
    // The given limit is checked as given: folding takes the lower of the two and would hide a bad one.
    if (Object.hasOwn(given, 'maxProspectsPerRun')) {
      const asGiven = maxProspectsPerRunSetting.safeParse(given.maxProspectsPerRun);
      if (!asGiven.success) throw validationError(describe(asGiven.error, 'settings.maxProspectsPerRun'));
    }
  }
  const settings = key === 'outreach' ? foldLegacyProspectLimit(given, current) : given;

  const workSchema = workSchemaOf(key, schemas);
  const replyKeys: readonly string[] = key === 'outreach' ? REPLY_KEYS : [];
  const unknown = Object.keys(settings).filter((k) => !replyKeys.includes(k) && !Object.hasOwn(workSchema.shape, k));
  if (unknown.length > 0) throw unknownSetting(key, unknown);

  const replyGiven = Object.fromEntries(Object.entries(settings).filter(([k]) => replyKeys.includes(k)));
  const reply = z.object(outreachReplyFields).partial().safeParse(replyGiven);
  if (!reply.success) throw validationError(describe(reply.error, 'settings'));
  Object.assign(changes, reply.data);

  const workGiven = Object.keys(settings).filter((k) => !replyKeys.includes(k));
  // A change to the work settings also rewrites a stored legacy limit, so no later event carries it.
  if (workGiven.length > 0 && storedWork !== stored.workSettings) {
    for (const k of ['maxProspectsPerRun', 'prospectCriteria']) if (!workGiven.includes(k)) workGiven.push(k);
  }
  if (workGiven.length > 0) {
    const merged = { ...onlyKnown(storedWork, workSchema), ...Object.fromEntries(Object.entries(settings).filter(([k]) => !replyKeys.includes(k))) };
    const work = workSchema.safeParse(merged);
    if (!work.success) throw unknownNestedSettings(key, work.error) ?? validationError(describe(work.error, 'settings'));
    const parsed = work.data as Record<string, unknown>;
    changes.workSettings = Object.fromEntries(workGiven.map((k) => [k, parsed[k]]));
  }
  return changes;
}

/** Defaults of every agent's visible settings (GET shows them next to the values). */
export const defaultSettingsOf = (key: AgentKey, defaults: AgentSettings, schemas: WorkSettingsSchemas) => visibleSettingsOf(key, defaults, schemas);

