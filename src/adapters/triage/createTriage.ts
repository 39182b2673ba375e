import type { Config } from '../../config.ts';
import type { Triage } from '../../ports/triage.ts';
import { OfflineTriage } from './offlineTriage.ts';
import { FallbackTriage, OpenAiTriage } from './openaiTriage.ts';

/**
 * The OpenAI(-compatible) classifier when OPENAI_API_KEY is set, falling back to the offline one on
 * any model failure; the offline classifier alone otherwise.
 */
export function createTriage(config: Pick<Config, 'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'OPENAI_MODEL' | 'OPENAI_TIMEOUT_MS'>, onModelError: (error: unknown) => void = () => {}): Triage {
  const offline = new OfflineTriage();
  if (!config.OPENAI_API_KEY) return offline;
  const openai = new OpenAiTriage({
    apiKey: config.OPENAI_API_KEY,
    baseURL: config.OPENAI_BASE_URL,
    model: config.OPENAI_MODEL,
    timeoutMs: config.OPENAI_TIMEOUT_MS,
  });
  return new FallbackTriage(openai, offline, onModelError);
}
