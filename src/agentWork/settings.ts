/**
 * Each agent's work settings: what its heuristics need, with defaults and bounds. The agents
 * endpoint (`PUT /agents/{agentKey}`) validates a body against these strict schemas, so an unknown
 * key is a 400; the runner passes the stored values back to the work, which reads them through
 * `workSettingsOf` (defaults filled in, keys that belong to the agent's configuration rather than
 * to its work left out).
 */
import { z } from 'zod';
import { type AgentKey, SIGNATURE_MAX_LENGTH } from '../domain/agents.ts';
import { MAX_PAGE_FETCH_TIMEOUT_MS } from '../ports/pageFetcher.ts';
import { ONE_LINE_TEXT_MESSAGE, cleanedText, isOneLineText } from '../domain/text.ts';
import { dailySendCapSetting, maxProspectsPerRunSetting } from '../domain/agentSettingsSchemas.ts';
import { DEFAULT_AI_PROMPT } from '../domain/agentWork/aiPrompt.ts';
import { DEFAULT_ARTICLE_BOOST } from '../domain/agentWork/articleBoost.ts';
import { DEFAULT_ARTICLE_CREATION } from '../domain/agentWork/articleCreation.ts';
import { DEFAULT_INTERLINKING } from '../domain/agentWork/interlinking.ts';

const seedKeywords = z.array(z.string().trim().min(1).max(80).refine(isOneLineText, ONE_LINE_TEXT_MESSAGE)).max(100).default([]);

export const interlinkingSettingsSchema = z.strictObject({
  maxLinksPerSource: z.number().int().min(1).max(50).default(DEFAULT_INTERLINKING.maxLinksPerSource),
  maxPhraseWords: z.number().int().min(1).max(8).default(DEFAULT_INTERLINKING.maxPhraseWords),
  maxPhraseShare: z.number().gt(0).max(1).default(DEFAULT_INTERLINKING.maxPhraseShare),
});

export const articleBoostSettingsSchema = z.strictObject({
  staleAfterDays: z.number().int().min(1).max(3650).default(DEFAULT_ARTICLE_BOOST.staleAfterDays),
  minWords: z.number().int().min(0).max(20_000).default(DEFAULT_ARTICLE_BOOST.minWords),
  minInboundLinks: z.number().int().min(0).max(100).default(DEFAULT_ARTICLE_BOOST.minInboundLinks),
  maxProposals: z.number().int().min(1).max(500).default(DEFAULT_ARTICLE_BOOST.maxProposals),
});

export const articleCreationSettingsSchema = z.strictObject({
  seedKeywords,
  minArticles: z.number().int().min(1).max(100).default(DEFAULT_ARTICLE_CREATION.minArticles),
  maxTopics: z.number().int().min(1).max(100).default(DEFAULT_ARTICLE_CREATION.maxTopics),
});

export const aiPromptSettingsSchema = z.strictObject({
  seedKeywords,
  maxQuestions: z.number().int().min(1).max(200).default(DEFAULT_AI_PROMPT.maxQuestions),
});

export const sitePerformanceSettingsSchema = z.strictObject({
  /** A page answering slower than this is reported slow. */
  slowMs: z.number().int().min(100).max(60_000).default(3000),
  /** A page that has not answered by then is unreachable. */
  timeoutMs: z.number().int().min(500).max(MAX_PAGE_FETCH_TIMEOUT_MS).default(10_000),
  concurrency: z.number().int().min(1).max(16).default(4),
  maxPages: z.number().int().min(1).max(5000).default(500),
});

export const outreachSettingsSchema = z.strictObject({
  /** Name in the pitch's From and the sign-off; the site's domain when null. */
  // Cleaned, not refused: a run reads the values stored before PUT refused control characters (agentSettingsSchemas).
  senderName: z.string().trim().min(1).max(120).transform(cleanedText).nullable().default(null),
  signature: z.string().trim().min(1).max(SIGNATURE_MAX_LENGTH).transform(cleanedText).nullable().default(null),
  /** Pitches this site may send per UTC day, all runs together. */
  dailySendCap: dailySendCapSetting,
  /** Prospects looked at per run: the API's one definition (src/domain/agentSettingsSchemas.ts). */
  maxProspectsPerRun: maxProspectsPerRunSetting,
  /** Prospect criteria: pitch only addresses on the prospect's own domain (no gmail.com contact). */
  requireDomainEmail: z.boolean().default(false),
});

export const workSettingsSchemas = {
  interlinking: interlinkingSettingsSchema,
  article_boost: articleBoostSettingsSchema,
  article_creation: articleCreationSettingsSchema,
  ai_prompt: aiPromptSettingsSchema,
  site_performance: sitePerformanceSettingsSchema,
  outreach: outreachSettingsSchema,
} as const satisfies { [K in AgentKey]: z.ZodObject };

export type WorkSettings<K extends AgentKey> = z.output<(typeof workSettingsSchemas)[K]>;

/** The work settings of a run: the stored values over the defaults, other keys ignored. */
export function workSettingsOf<K extends AgentKey>(key: K, settings: Record<string, unknown>): WorkSettings<K> {
  const schema = workSettingsSchemas[key];
  return z.object(schema.shape).parse(settings) as WorkSettings<K>;
}

/** Every agent's defaults, for the agents list. */
export const defaultWorkSettings = <K extends AgentKey>(key: K): WorkSettings<K> => workSettingsOf(key, {});
