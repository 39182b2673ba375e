import { type OpenAiModelConfig, openAiModelOf } from '../shared/openAiModel.ts';
import type { Triage, TriageDecision, TriageInput } from '../../ports/triage.ts';
import { OfflineTriage, classify } from './offlineTriage.ts';
import { FallbackTriage, OpenAiTriage } from './openaiTriage.ts';

/**
 * The OpenAI(-compatible) classifier when OPENAI_API_KEY is set, falling back to the offline one on
 * any model failure; the offline classifier alone otherwise.
 */
export function createTriage(config: OpenAiModelConfig, onModelError: (error: unknown) => void = () => {}): Triage {
  const offline = new OfflineTriage();
  const model = openAiModelOf(config);
  if (!model) return offline;
  return new OptOutFirst(offline, new FallbackTriage(new OpenAiTriage(model), offline, onModelError));
}

/**
 * An opt-out the offline rules recognise is honoured whatever the model says: a missed opt-out
 * would mail someone who asked not to be contacted, so the cheaper check runs first and wins.
 */
export class OptOutFirst implements Triage {
  readonly name: string;
  constructor(
    private readonly offline: OfflineTriage,
    private readonly model: Triage,
  ) {
    this.name = model.name;
  }

  async triage(input: TriageInput): Promise<TriageDecision> {
    const rules = classify(input);
    if (rules.outcome === 'opt_out') return { outcome: 'opt_out', classifier: this.offline.name, reasons: rules.reasons };
    return this.model.triage(input);
  }
}
