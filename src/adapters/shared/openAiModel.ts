import OpenAI from 'openai';
import type { Config } from '../../config.ts';

/**
 * Pitches and replies are short: the most of an email's body a prompt carries, so a huge body
 * (10 MiB through the mailbox, 500,000 characters through REST) does not cost a huge prompt.
 */
export const MAX_PROMPT_BODY_CHARS = 20_000;

/** The configuration a language-model adapter reads. */
export type OpenAiModelConfig = Pick<Config, 'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'OPENAI_MODEL' | 'OPENAI_TIMEOUT_MS'>;

/** How a language-model adapter reaches its model: OpenAI or any compatible server. */
export interface OpenAiModelOptions {
  apiKey: string;
  baseURL?: string;
  model: string;
  timeoutMs: number;
}

/** The model of the configuration; null without OPENAI_API_KEY (every adapter then works offline). */
export function openAiModelOf(config: OpenAiModelConfig): OpenAiModelOptions | null {
  if (!config.OPENAI_API_KEY) return null;
  return { apiKey: config.OPENAI_API_KEY, baseURL: config.OPENAI_BASE_URL, model: config.OPENAI_MODEL, timeoutMs: config.OPENAI_TIMEOUT_MS };
}

/** The `openai` SDK client of an adapter: one attempt within the timeout, since every adapter has its own fallback for a failure. */
export function openAiClientOf(options: OpenAiModelOptions): OpenAI {
  return new OpenAI({ apiKey: options.apiKey, baseURL: options.baseURL, timeout: options.timeoutMs, maxRetries: 0 });
}
