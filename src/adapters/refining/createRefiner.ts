import type { Config } from '../../config.ts';
import type { AgentRefiner, RefinableAgentKey } from '../../ports/agentRefiner.ts';
import { OfflineRefiner } from './offlineRefiner.ts';
import { FallbackRefiner, OpenAiRefiner } from './openaiRefiner.ts';

/**
 * The OpenAI(-compatible) refiner of the content agents' proposals when OPENAI_API_KEY is set,
 * falling back to the heuristic's proposals on any model failure; the offline (identity) refiner otherwise.
 */
export function createRefiner(
  config: Pick<Config, 'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'OPENAI_MODEL' | 'OPENAI_TIMEOUT_MS'>,
  onModelError: (error: unknown, agentKey: RefinableAgentKey) => void = () => {},
): AgentRefiner {
  if (!config.OPENAI_API_KEY) return new OfflineRefiner();
  const openai = new OpenAiRefiner({
    apiKey: config.OPENAI_API_KEY,
    baseURL: config.OPENAI_BASE_URL,
    model: config.OPENAI_MODEL,
    timeoutMs: config.OPENAI_TIMEOUT_MS,
  });
  return new FallbackRefiner(openai, onModelError);
}
