/**
 * Search Opportunity Agent (`article_creation`): proposes article topics the site leaves
 * uncovered. Two sources: the team's seed keywords, and phrases the articles keep mentioning
 * (two or three content words in a row, in at least `minArticles` articles) that no title covers.
 * A title covers a phrase when it holds all of the phrase's words.
 */
import type { ArticleInput, ProposalOf } from '../agentWork.ts';
import { TITLE_FILLER, contentWords, sentences, tokenize } from './text.ts';

export interface ArticleCreationSettings {
  seedKeywords: string[];
  /** A phrase must appear in at least this many articles to be proposed. */
  minArticles: number;
  maxTopics: number;
}

export const DEFAULT_ARTICLE_CREATION: ArticleCreationSettings = { seedKeywords: [], minArticles: 3, maxTopics: 10 };

/** Words that never start or end a topic: units, quantities and the commonest adjectives. */
const NOT_A_TOPIC_EDGE: ReadonlySet<string> = new Set(
  (
    'gram second minute hour degree week day month year time times percent cent ' +
    'good bad great little long short small large big same whole full sure able likely less least best better ' +
    'slightly almost nearly roughly about around usually often always never sometimes'
  ).split(' '),
);

interface Mention {
  articles: Set<number>;
  surfaces: Map<string, number>;
  neighbours: Map<string, number>;
}

/** `known`: a topic the site has already (see `proposalKey`) is passed over and does not count toward `maxTopics`. */
export function proposeArticleTopics(
  articles: readonly ArticleInput[],
  settings: ArticleCreationSettings = DEFAULT_ARTICLE_CREATION,
  known: (p: ProposalOf<'article_creation'>) => boolean = () => false,
): ProposalOf<'article_creation'>[] {
  const titles = articles.map((a) => new Set(contentWords(a.title)));
  const covered = (words: string[]) => titles.some((t) => words.every((w) => t.has(w)));
  const mentions = phraseMentions(articles);
  const titleList = (m: Mention | undefined) => {
    if (!m || m.articles.size === 0) return '';
    const names = [...m.articles].slice(0, 3).map((i) => `"${articles[i]!.title}"`);
    return `${names.join(', ')}${m.articles.size > 3 ? ` and ${m.articles.size - 3} more` : ''}`;
  };

  const proposals: ProposalOf<'article_creation'>[] = [];
  const taken = new Set<string>();
  for (const seed of settings.seedKeywords) {
    const words = contentWords(seed);
    const key = words.join(' ');
    if (words.length === 0 || taken.has(key) || covered(words)) continue;
    taken.add(key);
    const m = mentionsOfWords(mentions, words);
    const proposal: ProposalOf<'article_creation'> = {
      kind: 'article_creation',
      topic: seed.trim().toLowerCase(),
      keywords: keywordsOf(seed.trim().toLowerCase(), m, mentions),
      rationale:
        `Seed keyword "${seed.trim()}": no article's title covers it. ` +
        (m && m.articles.size > 0 ? `It is mentioned in ${m.articles.size} article${m.articles.size === 1 ? '' : 's'} (${titleList(m)}).` : 'No article mentions it yet.'),
    };
    if (!known(proposal)) proposals.push(proposal);
  }

  const candidates = [...mentions]
    .filter(([key, m]) => m.articles.size >= settings.minArticles && !covered(key.split(' ')))
    .sort(([ka, a], [kb, b]) => b.articles.size - a.articles.size || kb.split(' ').length - ka.split(' ').length || ka.localeCompare(kb));
  for (const [key, m] of candidates) {
    if (proposals.length >= settings.maxTopics) break;
    // "gooseneck kettle" and "kettle gooseneck": one topic; a part of a topic already proposed is not another.
    const words = key.split(' ');
    if ([...taken].some((t) => { const tw = t.split(' '); return words.every((w) => tw.includes(w)) || tw.every((w) => words.includes(w)); })) continue;
    taken.add(key);
    const topic = mostCommon(m.surfaces);
    const proposal: ProposalOf<'article_creation'> = {
      kind: 'article_creation',
      topic,
      keywords: keywordsOf(topic, m, mentions),
      rationale: `Mentioned in ${m.articles.size} articles (${titleList(m)}) but no article's title covers it.`,
    };
    if (!known(proposal)) proposals.push(proposal);
  }
  return proposals.slice(0, settings.maxTopics);
}

/** Every run of two or three content words in the articles' sentences, with where it appears. */
function phraseMentions(articles: readonly ArticleInput[]): Map<string, Mention> {
  const mentions = new Map<string, Mention>();
  for (const [i, a] of articles.entries()) {
    for (const s of sentences(a.text)) {
      const tokens = tokenize(s.text);
      const inSentence: string[] = [];
      for (let start = 0; start < tokens.length; start++) {
        for (let n = 2; n <= 3 && start + n <= tokens.length; n++) {
          const part = tokens.slice(start, start + n);
          if (part.some((t) => t.stop || /^\d/.test(t.norm) || TITLE_FILLER.has(t.norm))) break;
          if (NOT_A_TOPIC_EDGE.has(part[0]!.norm) || NOT_A_TOPIC_EDGE.has(part[n - 1]!.norm)) continue;
          const key = part.map((t) => t.norm).join(' ');
          let m = mentions.get(key);
          if (!m) mentions.set(key, (m = { articles: new Set(), surfaces: new Map(), neighbours: new Map() }));
          m.articles.add(i);
          const surface = s.text.slice(part[0]!.start, part[n - 1]!.end).toLowerCase();
          m.surfaces.set(surface, (m.surfaces.get(surface) ?? 0) + 1);
          inSentence.push(key);
        }
      }
      for (const key of inSentence) {
        const words = key.split(' ');
        const m = mentions.get(key)!;
        for (const other of inSentence) if (!other.split(' ').some((w) => words.includes(w))) m.neighbours.set(other, (m.neighbours.get(other) ?? 0) + 1);
      }
    }
  }
  return mentions;
}

function mentionsOfWords(mentions: Map<string, Mention>, words: string[]): Mention | undefined {
  if (words.length >= 2) return mentions.get(words.join(' '));
  // A one-word seed: every phrase that holds the word.
  const merged: Mention = { articles: new Set(), surfaces: new Map(), neighbours: new Map() };
  for (const [key, m] of mentions) {
    if (!key.split(' ').includes(words[0]!)) continue;
    for (const i of m.articles) merged.articles.add(i);
    for (const [k, c] of m.neighbours) if (!k.split(' ').includes(words[0]!)) merged.neighbours.set(k, (merged.neighbours.get(k) ?? 0) + c);
  }
  return merged;
}

/** The topic itself, then the phrases that most often share its sentences (at least twice). */
function keywordsOf(topic: string, m: Mention | undefined, mentions: Map<string, Mention>): string[] {
  if (!m) return [topic];
  const chosen: string[][] = [];
  for (const [key, c] of [...m.neighbours].sort((a, b) => b[1] - a[1] || b[0].length - a[0].length || a[0].localeCompare(b[0]))) {
    if (c < 2 || chosen.length >= 4) break;
    const words = key.split(' ');
    if (!chosen.some((k) => k.some((w) => words.includes(w)))) chosen.push(words);
  }
  return [topic, ...chosen.map((k) => mostCommon(mentions.get(k.join(' '))!.surfaces))];
}

function mostCommon(counts: Map<string, number>): string {
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
}
