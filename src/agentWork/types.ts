/**
 * The contract between the agent runner (src/processors/agentRuns/) and each agent's work
 * (src/agentWork/<agentKey>.ts, registered in src/agentWork/index.ts). The runner loads the run
 * and the agent's settings, calls the work, and records the returned proposals as opportunities
 * and the counts on the run's stream. Heuristics themselves are pure (src/domain/agentWork/).
 */
import type { AgentKey } from '../domain/agents.ts';
import type { AgentWorkResult, ArticleInput, OpportunityProposal } from '../domain/agentWork.ts';
import type { CommandContext } from '../commands/context.ts';
import type { Config } from '../config.ts';
import type { AgentRefiner } from '../ports/agentRefiner.ts';
import type { Mailer } from '../ports/mailer.ts';
import type { PageFetcher } from '../ports/pageFetcher.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';

/** One run as the work sees it. `settings` are the agent's validated work settings (the agent's own zod schema in src/agentWork/settings.ts). */
export interface AgentRunInput<K extends AgentKey = AgentKey> {
  runId: string;
  agentKey: K;
  teamId: string;
  siteId: string;
  /** The site's domain (e.g. `example.com`). */
  siteDomain: string;
  settings: Record<string, unknown>;
  /** ISO time the run started. */
  now: string;
}

/** What a run may use. Commands go through `commands`; queries through `readModels`. */
export interface AgentWorkDeps {
  commands: CommandContext;
  readModels: ReadModelStore;
  config: Config;
  mailer: Mailer;
  /** HTTPS page fetches (site_performance, outreach): the webhooks' SSRF-safe client (`pageFetcherFromConfig`). */
  fetcher: PageFetcher;
  /** The site's articles (from the `articles` read model), text extracted, internal links listed. */
  articles(siteId: string): Promise<ArticleInput[]>;
  /** Refines the content agents' proposals: the identity offline, the language model when OPENAI_API_KEY is set (`createRefiner`). */
  refiner: AgentRefiner;
  /** Aborted when the run must stop (shutdown); long work checks it between steps. */
  signal: AbortSignal;
  /**
   * Whether the site has this proposal as an opportunity already (`proposalKey`): an agent with a cap
   * passes over those before it, so a scheduled run finds the next ones. The runner drops any that
   * remain either way. Absent: none known.
   */
  proposedBefore?: (p: OpportunityProposal) => boolean;
}

export type AgentWork = (run: AgentRunInput, deps: AgentWorkDeps) => Promise<AgentWorkResult>;

export type AgentWorkRegistry = { readonly [K in AgentKey]: AgentWork };
