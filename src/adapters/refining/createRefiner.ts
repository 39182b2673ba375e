import { type OpenAiModelConfig, openAiModelOf } from '../shared/openAiModel.ts';
import type { AgentRefiner, RefinableAgentKey } from '../../ports/agentRefiner.ts';
import { OfflineRefiner } from './offlineRefiner.ts';
import { FallbackRefiner, OpenAiRefiner } from './openaiRefiner.ts';

/**
 * The OpenAI(-compatible) refiner of the content agents' proposals when OPENAI_API_KEY is set,
 * falling back to the heuristic's proposals on any model failure; the offline (identity) refiner otherwise.
 */
export function createRefiner(
  config: OpenAiModelConfig,
  onModelError: (error: unknown, agentKey: RefinableAgentKey) => void = () => {},
): AgentRefiner {
  const model = openAiModelOf(config);
  if (!model) return new OfflineRefiner();
  return new FallbackRefiner(new OpenAiRefiner(model), onModelError);
}
