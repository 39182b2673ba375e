import { type OpenAiModelConfig, openAiModelOf } from '../shared/openAiModel.ts';
import type { Drafter } from '../../ports/drafter.ts';
import { FallbackDrafter, OpenAiDrafter } from './openaiDrafter.ts';
import { TemplateDrafter } from './templateDrafter.ts';

/**
 * The OpenAI(-compatible) drafter when OPENAI_API_KEY is set, falling back to the template on any
 * model failure or rejected draft; the template drafter alone otherwise.
 */
export function createDrafter(config: OpenAiModelConfig, onModelError: (error: unknown) => void = () => {}): Drafter {
  const template = new TemplateDrafter();
  const model = openAiModelOf(config);
  if (!model) return template;
  return new FallbackDrafter(new OpenAiDrafter(model), template, onModelError);
}
