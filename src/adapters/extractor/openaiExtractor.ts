import type OpenAI from 'openai';
import { MAX_PROMPT_BODY_CHARS, type OpenAiModelOptions, openAiClientOf } from '../shared/openAiModel.ts';
import { z } from 'zod';
import type { ExtractionInput, ExtractionOutcome, Extractor } from '../../ports/extractor.ts';

/** The structured output we ask for, validated with zod before anything is trusted. */
export const extractionOutput = z.object({
  actionable: z.boolean(),
  asks: z
    .array(
      z.object({
        targetUrl: z.url({ protocol: /^https?$/ }),
        anchorText: z.string().max(500).nullable(),
        suggestedSentence: z.string().max(2000).nullable(),
        sourceUrl: z.url({ protocol: /^https?$/ }).nullable(),
      }),
    )
    .max(20),
});

const JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['actionable', 'asks'],
  properties: {
    actionable: { type: 'boolean', description: 'true when the sender asks for at least one link to be placed' },
    asks: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['targetUrl', 'anchorText', 'suggestedSentence', 'sourceUrl'],
        properties: {
          targetUrl: { type: 'string', description: "the URL the sender wants linked (the sender's page)" },
          anchorText: { type: ['string', 'null'], description: 'the anchor text the sender proposes' },
          suggestedSentence: { type: ['string', 'null'], description: 'the sentence the sender proposes to add' },
          sourceUrl: { type: ['string', 'null'], description: "the page of the recipient's site where the link should go" },
        },
      },
    },
  },
} as const;

const SYSTEM_PROMPT = `You read emails sent to a website owner. Extract every link-building ask: the URL the sender wants linked (targetUrl), the proposed anchor text, the proposed sentence, and the page of the recipient's site where the link should go (sourceUrl). Set actionable to false and asks to [] when the email asks for no specific link. Never invent URLs that are not in the email.`;

/** The language-model extractor: the `openai` SDK against OpenAI or any compatible server. */
export class OpenAiExtractor implements Extractor {
  readonly name: string;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiModelOptions) {
    this.name = `openai:${options.model}`;
    this.client = openAiClientOf(options);
  }

  async extract(input: ExtractionInput): Promise<ExtractionOutcome> {
    const completion = await this.client.chat.completions.create({
      model: this.options.model,
      temperature: 0,
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: `Recipient site: ${input.siteDomain}\nFrom: ${input.from}\nSubject: ${input.subject}\n\n${input.bodyText.slice(0, MAX_PROMPT_BODY_CHARS)}` },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'link_building_asks', strict: true, schema: JSON_SCHEMA } },
    });
    const content = completion.choices[0]?.message?.content;
    if (!content) throw new Error('the model returned no content');
    const parsed = extractionOutput.parse(JSON.parse(content));
    return { asks: parsed.actionable ? parsed.asks : [], extractor: this.name };
  }
}

/**
 * Uses the primary extractor and, when it fails (network, timeout, HTTP error, output that is not
 * valid JSON or fails the schema), the fallback one, so an ingestion never fails on the model.
 */
export class FallbackExtractor implements Extractor {
  readonly name: string;

  constructor(
    private readonly primary: Extractor,
    private readonly fallback: Extractor,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.name = primary.name;
  }

  async extract(input: ExtractionInput): Promise<ExtractionOutcome> {
    try {
      return await this.primary.extract(input);
    } catch (error) {
      this.onError(error);
      const outcome = await this.fallback.extract(input);
      return { ...outcome, extractor: `${outcome.extractor} (fallback from ${this.primary.name})` };
    }
  }
}
