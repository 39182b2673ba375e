import type { AgentRefiner, Refinement, RefinableAgentKey, RefineInput } from '../../ports/agentRefiner.ts';

export const OFFLINE_REFINER_NAME = 'offline';

/** No model configured: the heuristic's proposals are the run's proposals, as they are. */
export class OfflineRefiner implements AgentRefiner {
  readonly name = OFFLINE_REFINER_NAME;

  async refine<K extends RefinableAgentKey>(input: RefineInput<K>): Promise<Refinement<K>> {
    return { proposals: input.proposals, outcome: 'unchanged', refiner: this.name, dropped: 0, creditsUsed: 0 };
  }
}
