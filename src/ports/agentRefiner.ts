import type { ArticleInput, ProposalOf, RefinableAgentKey } from '../domain/agentWork.ts';

export { REFINABLE_AGENT_KEYS, type RefinableAgentKey } from '../domain/agentWork.ts';

export interface RefineInput<K extends RefinableAgentKey> {
  agentKey: K;
  siteDomain: string;
  /** The heuristic's proposals, best first. */
  proposals: ProposalOf<K>[];
  /** The site's articles the heuristic read: the only articles a refined proposal may name. */
  articles: readonly ArticleInput[];
  /** The run's signal: an aborted run stops waiting for the model. */
  signal: AbortSignal;
}

/**
 * `unchanged`: no model is configured (the heuristic's proposals as they were);
 * `refined`: the model's subset, re-ranked and reworded, every target checked against the input;
 * `skipped`: the model failed (error, timeout, invalid output) and the heuristic's proposals stand.
 */
export type RefinementOutcome = 'unchanged' | 'refined' | 'skipped';

export interface Refinement<K extends RefinableAgentKey> {
  proposals: ProposalOf<K>[];
  outcome: RefinementOutcome;
  /** Which refiner answered, for logs: `offline`, `openai:<model>`. */
  refiner: string;
  /** Items of the model's answer dropped because they named something not in the input (refined only). */
  dropped: number;
  /** AI credits used: 1 for a refined run's model answer, 0 otherwise. */
  creditsUsed: number;
}

export interface AgentRefiner {
  readonly name: string;
  refine<K extends RefinableAgentKey>(input: RefineInput<K>): Promise<Refinement<K>>;
}
