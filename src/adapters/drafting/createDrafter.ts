import type { Config } from '../../config.ts';
import type { Drafter } from '../../ports/drafter.ts';
import { FallbackDrafter, OpenAiDrafter } from './openaiDrafter.ts';
import { TemplateDrafter } from './templateDrafter.ts';

/**
 * The OpenAI(-compatible) drafter when OPENAI_API_KEY is set, falling back to the template on any
 * model failure or rejected draft; the template drafter alone otherwise.
 */
export function createDrafter(config: Pick<Config, 'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'OPENAI_MODEL' | 'OPENAI_TIMEOUT_MS'>, onModelError: (error: unknown) => void = () => {}): Drafter {
  const template = new TemplateDrafter();
  if (!config.OPENAI_API_KEY) return template;
  const openai = new OpenAiDrafter({
    apiKey: config.OPENAI_API_KEY,
    baseURL: config.OPENAI_BASE_URL,
    model: config.OPENAI_MODEL,
    timeoutMs: config.OPENAI_TIMEOUT_MS,
  });
  return new FallbackDrafter(openai, template, onModelError);
}
