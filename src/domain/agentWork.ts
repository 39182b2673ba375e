/**
 * What the six agents work on and what they produce: the contract between the agent runner
 * (`src/processors/agentRuns/`, which loads the inputs, calls the work and records the outputs as
 * events) and each agent's work (`src/agentWork/<agentKey>.ts`). Pure types, no I/O.
 */
import type { AgentKey } from './agents.ts';

/** A site's article as the content agents see it (the `articles` read model, text already extracted from HTML). */
export interface ArticleInput {
  id: string;
  url: string;
  title: string;
  /** Plain text of the body (HTML already stripped), paragraphs separated by blank lines. */
  text: string;
  /** Internal links found in the body (absolute URLs), so agents know what is already linked. */
  links: string[];
  publishedAt: string | null;
  updatedAt: string | null;
}

/** One proposal an agent run produces; each becomes an opportunity of `kind` = the agent key. */
export type OpportunityProposal =
  | {
      kind: 'interlinking';
      sourceArticleId: string;
      sourceUrl: string;
      /** Words of the source's sentence to turn into the link. */
      anchor: string;
      targetArticleId: string;
      targetUrl: string;
      /** The source article's sentence that holds the anchor, verbatim. */
      sentence: string;
    }
  | { kind: 'article_boost'; articleId: string; url: string; reasons: ArticleBoostReason[]; detail: string }
  | { kind: 'article_creation'; topic: string; keywords: string[]; rationale: string }
  | {
      kind: 'ai_prompt';
      question: string;
      articleId: string | null;
      url: string | null;
      rationale: string;
      /** The heuristic's question when a language model reworded it (what tells one question from another across runs). */
      originalQuestion?: string;
    }
  | { kind: 'site_performance'; url: string; problems: PageProblem[]; status: number | null; durationMs: number | null; location: string | null; detail: string }
  | {
      kind: 'outreach';
      prospectUrl: string;
      contactEmail: string;
      conversationId: string;
      subject: string;
      /** The opportunity the pitch's conversation opened (written by the inbox projection): record the proposal under this id, not a new one. */
      opportunityId: string;
      /** The site's article the pitch offers; null when none matched the prospect. */
      offeredUrl: string | null;
    };

export type ArticleBoostReason = 'stale' | 'thin' | 'poorly_linked';
export type PageProblem = 'broken' | 'slow' | 'redirected' | 'untitled' | 'unreachable';

/** What a run reports besides its proposals: counted outputs and a one-line summary. */
export interface AgentWorkResult {
  proposals: OpportunityProposal[];
  /** Counted outputs by name (e.g. `{ articlesRead: 120, linksProposed: 14 }`), shown on the run. */
  counts: Record<string, number>;
  /** AI credits the run used (0 for offline heuristics). */
  creditsUsed: number;
}

/**
 * The content agents whose proposals a language model may refine (src/ports/agentRefiner.ts).
 * `site_performance` measures pages (nothing to word better) and `outreach` mails real people: neither is refined.
 */
export type RefinableAgentKey = 'interlinking' | 'article_boost' | 'article_creation' | 'ai_prompt';
export const REFINABLE_AGENT_KEYS = ['interlinking', 'article_boost', 'article_creation', 'ai_prompt'] as const satisfies readonly RefinableAgentKey[];

export type ProposalOf<K extends AgentKey> = Extract<OpportunityProposal, { kind: K }>;

/**
 * What makes two proposals of a site the same opportunity: the same link (source and target), the
 * same article with the same reasons, the same topic or question as the heuristic found it, the
 * same page with the same problems. A run does not record a proposal the site has already (the runner compares keys);
 * null for an outreach proposal, which is its pitch's opportunity already.
 */
export function proposalKey(p: OpportunityProposal): string | null {
  switch (p.kind) {
    case 'interlinking':
      return `${p.sourceArticleId}>${p.targetArticleId}`;
    case 'article_boost':
      return `${p.articleId}:${[...p.reasons].sort().join(',')}`;
    // A language model's refinement rewords topics and questions; the heuristic's own text stays
    // (a topic's first keyword is the topic it found; a reworded question keeps the original).
    case 'article_creation':
      return (p.keywords[0] ?? p.topic).trim().toLowerCase();
    case 'ai_prompt':
      return (p.originalQuestion ?? p.question).trim().toLowerCase();
    case 'site_performance':
      return `${p.url}:${[...p.problems].sort().join(',')}`;
    case 'outreach':
      return null;
  }
}
