import { type OpenAiModelConfig, openAiModelOf } from '../shared/openAiModel.ts';
import type { Triage, TriageDecision, TriageInput } from '../../ports/triage.ts';
import { THANKS_ON_THREAD, THREAD_REPLY } from '../../domain/outreachAgent.ts';
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
 * The model, held to the offline rules where they must win. An opt-out the rules recognise is honoured
 * whatever the model says: a missed opt-out would mail someone who asked not to be contacted, so the
 * cheaper check runs first and wins. On a thread the prompt's `accept` is a thanks or an agreement,
 * but the model names its reasons freely: the rules say which thanks gets no reply (`thanks_on_thread`;
 * a "Thank you!" got a second acceptance mail, and two auto-responders could mail each other), and
 * any other accept on a thread goes to a person, as offline.
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
    const decided = await this.model.triage(input);
    if (!input.isReply || decided.outcome !== 'accept' || decided.reasons.includes(THANKS_ON_THREAD)) return decided;
    return rules.reasons.includes(THANKS_ON_THREAD)
      ? { ...decided, reasons: [...decided.reasons, THANKS_ON_THREAD] }
      : { ...decided, outcome: 'needs_human', reasons: [...decided.reasons, THREAD_REPLY] };
  }
}
