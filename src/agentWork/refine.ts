import type { ArticleInput, ProposalOf, RefinableAgentKey } from '../domain/agentWork.ts';
import type { RefinementOutcome } from '../ports/agentRefiner.ts';
import type { AgentRunInput, AgentWorkDeps } from './types.ts';

/** What a refinement adds to the run's counts: nothing offline; `aiRefined` + `aiDropped`, or `aiRefinementSkipped` when the model failed. */
function refinementCounts(outcome: RefinementOutcome, dropped: number): Record<string, number> {
  if (outcome === 'refined') return { aiRefined: 1, aiDropped: dropped };
  if (outcome === 'skipped') return { aiRefinementSkipped: 1 };
  return {};
}

/**
 * The heuristic's proposals through the run's refiner (`deps.refiner`): unchanged offline, the
 * model's re-ranked and reworded subset when one is configured, the heuristic's again when it fails.
 */
export async function refineProposals<K extends RefinableAgentKey>(
  agentKey: K,
  run: AgentRunInput,
  deps: AgentWorkDeps,
  proposals: ProposalOf<K>[],
  articles: readonly ArticleInput[],
): Promise<{ proposals: ProposalOf<K>[]; counts: Record<string, number>; creditsUsed: number }> {
  const refinement = await deps.refiner.refine({ agentKey, siteDomain: run.siteDomain, proposals, articles, signal: deps.signal });
  return { proposals: refinement.proposals, counts: refinementCounts(refinement.outcome, refinement.dropped), creditsUsed: refinement.creditsUsed };
}
