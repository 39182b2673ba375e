/**
 * Refining the content agents' proposals with a language model, the pure part: what the model is
 * shown (the heuristic's proposals and compact article briefs, never contact data), the shape its
 * answer must have, and how that answer is applied. The model may only keep, re-rank and reword
 * what the heuristic proposed: every item it returns must name a proposal and articles of the
 * input (else the item is dropped), and the URLs always come from the articles, never from it.
 */
import { z } from 'zod';
import type { ArticleInput, ProposalOf, RefinableAgentKey } from '../agentWork.ts';
import { assertNever } from '../decider.ts';

/** Proposals shown to the model per run (best first); the rest follow the refined ones unchanged. */
export const MAX_REFINED_PROPOSALS = 40;
/** Articles shown to the model per run: those the shown proposals name, then others (ai_prompt, article_creation). */
export const MAX_CONTEXT_ARTICLES = 80;
const EXCERPT_CHARS = 240;

/** An article as the model sees it. */
export interface ArticleBrief {
  id: string;
  url: string;
  title: string;
  excerpt: string;
}

export interface RefinementContext<K extends RefinableAgentKey> {
  /** The proposals shown to the model, each referred to by its index (`ref`). */
  shown: ProposalOf<K>[];
  /** The proposals past MAX_REFINED_PROPOSALS: kept as they are, after the refined ones. */
  rest: ProposalOf<K>[];
  articles: ArticleBrief[];
}

/** The opening of an article's text, whitespace collapsed, cut at a word. */
export function excerptOf(text: string, max = EXCERPT_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

const briefOf = (a: ArticleInput): ArticleBrief => ({ id: a.id, url: a.url, title: a.title, excerpt: excerptOf(a.text) });

function articleIdsOf(proposal: ProposalOf<RefinableAgentKey>): string[] {
  switch (proposal.kind) {
    case 'interlinking':
      return [proposal.sourceArticleId, proposal.targetArticleId];
    case 'article_boost':
      return [proposal.articleId];
    case 'ai_prompt':
      return proposal.articleId ? [proposal.articleId] : [];
    case 'article_creation':
      return [];
    default:
      return assertNever(proposal);
  }
}

/** What the model is shown for one run. */
export function refinementContext<K extends RefinableAgentKey>(agentKey: K, proposals: readonly ProposalOf<K>[], articles: readonly ArticleInput[]): RefinementContext<K> {
  const shown = proposals.slice(0, MAX_REFINED_PROPOSALS);
  const byId = new Map(articles.map((a) => [a.id, a]));
  const ids = new Set(shown.flatMap((p) => articleIdsOf(p)).filter((id) => byId.has(id)));
  // The model may answer a question with another article, and must know what the site covers to name a new topic.
  if (agentKey === 'ai_prompt' || agentKey === 'article_creation') {
    for (const a of articles) {
      if (ids.size >= MAX_CONTEXT_ARTICLES) break;
      ids.add(a.id);
    }
  }
  return { shown, rest: proposals.slice(MAX_REFINED_PROPOSALS), articles: [...ids].map((id) => briefOf(byId.get(id)!)) };
}

const id = z.string().trim().min(1).max(200);
const wording = (max: number) => z.string().trim().min(1).max(max);
const ref = z.number().int().min(0);

/** The model's answer per agent, validated before anything is used. Items come best first. */
export const refinementOutputSchemas = {
  interlinking: z.object({ items: z.array(z.object({ sourceArticleId: id, targetArticleId: id, anchor: wording(120) })).max(200) }),
  article_boost: z.object({ items: z.array(z.object({ articleId: id, advice: wording(400) })).max(200) }),
  article_creation: z.object({ items: z.array(z.object({ ref, title: wording(150), keywords: z.array(wording(80)).max(8), angle: wording(400) })).max(200) }),
  ai_prompt: z.object({ items: z.array(z.object({ ref, question: wording(200), articleId: id.nullable(), rationale: wording(400) })).max(200) }),
} as const satisfies { [K in RefinableAgentKey]: z.ZodType };

export type RefinementOutput<K extends RefinableAgentKey> = z.output<(typeof refinementOutputSchemas)[K]>;

/** The model's answer named nothing usable: the heuristic's proposals stand. */
export class RefinementRejectedError extends Error {
  override name = 'RefinementRejectedError';
}

const URL_LIKE = /\bhttps?:\/\/|\bwww\.|\b[a-z0-9-]+\.(?:com|net|org|io|co|example)\b/i;
/** Model wording is used only when it names no URL or domain: links come from the articles alone. */
const clean = (text: string, fallback: string) => (URL_LIKE.test(text) ? fallback : text.replace(/\s+/g, ' ').trim());
const normQuestion = (q: string) => q.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

/**
 * Applies the model's answer to the shown proposals: the refined subset in the model's order,
 * then `rest` unchanged. Items naming a proposal (ref, article pair or article) or an article that
 * was not in the input are dropped and counted; an answer that keeps nothing of a non-empty input
 * is rejected (RefinementRejectedError).
 */
export function applyRefinement<K extends RefinableAgentKey>(
  agentKey: K,
  context: RefinementContext<K>,
  articles: readonly ArticleInput[],
  output: RefinementOutput<K>,
): { proposals: ProposalOf<K>[]; dropped: number } {
  const byId = new Map(articles.map((a) => [a.id, a]));
  const refined: ProposalOf<RefinableAgentKey>[] = [];
  const seen = new Set<string>();
  let dropped = 0;
  const keep = (key: string, proposal: ProposalOf<RefinableAgentKey> | null) => {
    if (proposal === null) dropped += 1;
    else if (!seen.has(key)) {
      seen.add(key);
      refined.push(proposal);
    }
  };
  const shown = context.shown as ProposalOf<RefinableAgentKey>[];
  const key = agentKey as RefinableAgentKey;
  switch (key) {
    case 'interlinking': {
      const pairs = new Map<string, ProposalOf<'interlinking'>>(shown.flatMap((p) => (p.kind === 'interlinking' ? [[`${p.sourceArticleId}\n${p.targetArticleId}`, p] as const] : [])));
      for (const item of (output as RefinementOutput<'interlinking'>).items) {
        const pair = `${item.sourceArticleId}\n${item.targetArticleId}`;
        const p = pairs.get(pair);
        keep(pair, p ? { ...p, anchor: anchorIn(p.sentence, item.anchor) ?? p.anchor } : null);
      }
      break;
    }
    case 'article_boost': {
      const boosts = new Map<string, ProposalOf<'article_boost'>>(shown.flatMap((p) => (p.kind === 'article_boost' ? [[p.articleId, p] as const] : [])));
      for (const item of (output as RefinementOutput<'article_boost'>).items) {
        const p = boosts.get(item.articleId);
        const advice = clean(item.advice, '');
        keep(item.articleId, p ? { ...p, detail: advice ? `${p.detail} What to refresh: ${advice}` : p.detail } : null);
      }
      break;
    }
    case 'article_creation':
      for (const item of (output as RefinementOutput<'article_creation'>).items) {
        const p = shown[item.ref];
        if (p?.kind !== 'article_creation') {
          keep(`${item.ref}`, null);
          continue;
        }
        const keywords = [...new Set([...p.keywords, ...item.keywords.map((k) => clean(k, '').toLowerCase()).filter(Boolean)])].slice(0, 8);
        const angle = clean(item.angle, '');
        keep(`${item.ref}`, { ...p, topic: clean(item.title, p.topic), keywords, rationale: angle ? `${p.rationale} Angle: ${angle}` : p.rationale });
      }
      break;
    case 'ai_prompt':
      for (const item of (output as RefinementOutput<'ai_prompt'>).items) {
        const p = shown[item.ref];
        const article = item.articleId === null ? null : byId.get(item.articleId);
        if (p?.kind !== 'ai_prompt' || article === undefined) {
          keep(`${item.ref}`, null);
          continue;
        }
        const question = clean(item.question, p.question);
        const sameAnswer = (article?.id ?? null) === p.articleId;
        const rationale = sameAnswer ? p.rationale : clean(item.rationale, article ? `"${article.title}" answers this question.` : 'No article answers this question yet.');
        const reworded = question !== p.question ? { originalQuestion: p.originalQuestion ?? p.question } : {};
        keep(normQuestion(question), { ...p, question, ...reworded, articleId: article?.id ?? null, url: article?.url ?? null, rationale });
      }
      break;
    default:
      assertNever(key);
  }
  if (refined.length === 0 && context.shown.length > 0) throw new RefinementRejectedError(`the model kept none of the ${context.shown.length} proposals (${dropped} named something not in the input)`);
  return { proposals: [...(refined as ProposalOf<K>[]), ...context.rest], dropped };
}

/** The anchor the model chose, as written in the sentence (any case), or null when the sentence does not hold it. */
function anchorIn(sentence: string, anchor: string): string | null {
  const wanted = anchor.replace(/\s+/g, ' ').trim();
  if (wanted.length < 2) return null;
  const at = sentence.toLowerCase().indexOf(wanted.toLowerCase());
  if (at < 0 || wanted.length >= sentence.trim().length) return null;
  return sentence.slice(at, at + wanted.length);
}
