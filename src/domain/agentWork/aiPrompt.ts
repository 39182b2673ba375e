/**
 * AI Opportunity Agent (`ai_prompt`): the questions people ask AI assistants where the site's
 * articles should be the answer, and which article answers each (null when none does: a gap).
 * Questions come from the team's seed keywords, the articles' titles ("How to …", "Choosing …",
 * "… for …", "… vs …"), headings that already ask a question, and comparisons the articles make
 * between two of the site's topics ("between a French press and pour over coffee").
 */
import type { ArticleInput, ProposalOf } from '../agentWork.ts';
import { contentWords, headings, sentences, titlePhrases, tokenize } from './text.ts';

export interface AiPromptSettings {
  seedKeywords: string[];
  maxQuestions: number;
}

export const DEFAULT_AI_PROMPT: AiPromptSettings = { seedKeywords: [], maxQuestions: 30 };

type Proposal = ProposalOf<'ai_prompt'>;

/** `known`: a question the site has already (see `proposalKey`) is passed over and does not count toward `maxQuestions`. */
export function proposeAiPrompts(articles: readonly ArticleInput[], settings: AiPromptSettings = DEFAULT_AI_PROMPT, known: (p: Proposal) => boolean = () => false): Proposal[] {
  const out: Proposal[] = [];
  const seen = new Set<string>();
  const add = (question: string, article: ArticleInput | null, rationale: string) => {
    const key = question.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ kind: 'ai_prompt', question, articleId: article?.id ?? null, url: article?.url ?? null, rationale });
  };

  for (const seed of settings.seedKeywords) {
    const topic = seed.trim().toLowerCase();
    if (!topic) continue;
    const answer = bestAnswer(articles, topic);
    add(
      `What is the best ${topic}?`,
      answer,
      answer
        ? `Seed keyword "${seed.trim()}": "${answer.title}" covers it and should be the answer.`
        : `Seed keyword "${seed.trim()}": no article covers it, so assistants will cite someone else. Write one.`,
    );
  }
  for (const a of articles) {
    const q = questionFromTitle(a.title);
    if (q) add(q, a, `The title "${a.title}" answers this question; phrase the opening paragraph as a direct answer.`);
  }
  for (const a of articles) {
    for (const h of headings(a.text)) {
      if (h.endsWith('?') && wordsIn(h) >= 3) add(h, a, `"${a.title}" asks it in a heading; keep the answer in the first sentence under it.`);
    }
  }
  for (const c of comparisons(articles)) {
    add(`${c.a} vs ${c.b}: which should I choose?`, c.article, `"${c.article.title}" compares ${c.a} and ${c.b}: "${c.sentence}"`);
  }
  return out.filter((p) => !known(p)).slice(0, settings.maxQuestions);
}

const wordsIn = (s: string) => tokenize(s).length;

/** The article whose title (or else a heading) holds all of the topic's words; null when none does. */
export function bestAnswer(articles: readonly ArticleInput[], topic: string): ArticleInput | null {
  const words = contentWords(topic);
  if (words.length === 0) return null;
  const holds = (text: string) => {
    const have = new Set(contentWords(text));
    return words.every((w) => have.has(w));
  };
  return articles.find((a) => holds(a.title)) ?? articles.find((a) => headings(a.text).some(holds)) ?? null;
}

const QUESTION_START = /^(how|what|why|when|where|which|who|can|should|is|are|does|do)\b/i;

/** "How to Dial In Espresso at Home" -> "How do I dial in espresso at home?" and similar; null when the title reads as no question. */
export function questionFromTitle(title: string): string | null {
  const t = title.trim().replace(/[?.!]+$/, '');
  const lower = (s: string) => s.replace(/\b(\p{Lu})(\p{Ll}+)\b/gu, (_, a: string, b: string) => a.toLowerCase() + b).replace(/\b[Yy]our\b/g, 'my');
  let m: RegExpMatchArray | null;
  if ((m = t.match(/^how to (.+)$/i))) return `How do I ${lower(m[1]!)}?`;
  if (QUESTION_START.test(t)) return `${t}?`;
  if ((m = t.match(/^(.+?)\s+(?:vs\.?|versus)\s+(.+)$/i))) return `${lower(m[1]!)} or ${lower(m[2]!)}: which is better?`.replace(/^./, (c) => c.toUpperCase());
  if ((m = t.match(/^(?:understanding|the basics of)\s+(.+)$/i)) || (m = t.match(/^(.+?)\s+explained$/i))) {
    const subject = lower(m[1]!);
    return /s$/.test(subject) ? `What are ${subject}?` : `What is ${/^(?:a|an|the)\b/.test(subject) ? '' : 'the '}${subject}?`;
  }
  if ((m = t.match(/^(\p{L}+ing)\s+(.+)$/u)) && !/^(?:brewing|pouring)$/i.test(m[1]!)) return `How do I ${baseVerb(m[1]!.toLowerCase())} ${lower(m[2]!)}?`;
  if ((m = t.match(/^(.+?)\s+recipes?\s+for\s+(.+)$/i))) return `What is a good ${lower(m[1]!)} recipe for ${lower(m[2]!)}?`;
  if ((m = t.match(/^(.+?)\s+recipes?$/i))) return `How do I make ${lower(m[1]!)}?`;
  if ((m = t.match(/^(.+?)\s+(?:guide|basics|for beginners|for dummies|101)$/i))) return `How do I get started with ${lower(m[1]!)}?`;
  if ((m = t.match(/^(.+?ing)\s+for\s+(.+)$/i))) return `How do I get ${lower(m[1]!)} right for ${lower(m[2]!)}?`;
  if ((m = t.match(/^(.+?)\s+for\s+(.+)$/i))) return `What is the best ${lower(m[1]!)} for ${lower(m[2]!)}?`;
  return null;
}

const IRREGULAR: Record<string, string> = { making: 'make', taking: 'take', using: 'use', buying: 'buy', getting: 'get', running: 'run' };

/** "choosing" -> "choose", "storing" -> "store", "cleaning" -> "clean": good enough for title verbs. */
function baseVerb(gerund: string): string {
  if (IRREGULAR[gerund]) return IRREGULAR[gerund];
  const stem = gerund.slice(0, -3);
  if (/([bdgmnprt])\1$/.test(stem)) return stem.slice(0, -1);
  if (/[^aeiou][aeiou][rslvzc]$/.test(stem) || /[aeiou]{2}[sz]$/.test(stem)) return `${stem}e`;
  return stem;
}

interface Comparison {
  a: string;
  b: string;
  article: ArticleInput;
  sentence: string;
}

/** Sentences that set two of the site's topics side by side ("between A and B", "A or B", "A vs B"). */
function comparisons(articles: readonly ArticleInput[]): Comparison[] {
  const topics = new Set<string>();
  for (const a of articles) for (const p of titlePhrases(a.title)) if (p.length >= 2 || p[0]!.length >= 6) topics.add(p.join(' '));
  const found: Comparison[] = [];
  // "between A and B", "A vs B", "A versus B", "A compared with B": a plain "A or B" lists, it does not compare.
  const side = String.raw`(?:an?\s+|the\s+)?([\p{L}-]+(?:\s+[\p{L}-]+){0,3})`;
  const pattern = new RegExp(String.raw`\bbetween\s+${side}\s+and\s+${side}|${side}\s+(?:vs\.?|versus|compared (?:with|to))\s+${side}`, 'giu');
  for (const a of articles) {
    for (const s of sentences(a.text)) {
      if (s.heading) continue;
      for (const m of s.text.matchAll(pattern)) {
        const left = longestTopicSuffix(m[1] ?? m[3]!, topics);
        const right = longestTopicPrefix(m[2] ?? m[4]!, topics);
        if (left && right && left.key !== right.key) found.push({ a: left.surface, b: right.surface, article: a, sentence: s.text });
      }
    }
  }
  return found;
}

function longestTopicSuffix(text: string, topics: Set<string>): { key: string; surface: string } | null {
  const tokens = tokenize(text);
  for (let i = 0; i < tokens.length; i++) {
    const key = tokens.slice(i).map((t) => t.norm).join(' ');
    if (topics.has(key)) return { key, surface: text.slice(tokens[i]!.start) };
  }
  return null;
}

function longestTopicPrefix(text: string, topics: Set<string>): { key: string; surface: string } | null {
  const tokens = tokenize(text);
  for (let n = tokens.length; n >= 1; n--) {
    const key = tokens.slice(0, n).map((t) => t.norm).join(' ');
    if (topics.has(key)) return { key, surface: text.slice(0, tokens[n - 1]!.end) };
  }
  return null;
}
