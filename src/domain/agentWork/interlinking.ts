/**
 * Interlinking Agent: finds sentences in one article that name the topic of another and proposes
 * an internal link (source, anchor words verbatim, target, the sentence verbatim).
 *
 * A topic is a phrase of the target's title ("french press", "coffee to water ratio"), or one
 * distinctive title word the target keeps using and few other articles mention ("aeropress").
 * All topics go into one index keyed by their normalised words, and each article's sentences are
 * scanned once, looking up the phrases that start at each word: the work grows with the total
 * number of words (times the longest phrase), not with the number of article pairs.
 */
import type { ArticleInput, ProposalOf } from '../agentWork.ts';
import { type Token, normalizeUrl, sentences, titlePhrases, tokenize } from './text.ts';

export interface InterlinkingSettings {
  /** At most this many links proposed per source article. */
  maxLinksPerSource: number;
  /** Longest topic phrase, in words. */
  maxPhraseWords: number;
  /** A phrase that more than this share of the other articles mention is too common to be a link. */
  maxPhraseShare: number;
}

export const DEFAULT_INTERLINKING: InterlinkingSettings = { maxLinksPerSource: 5, maxPhraseWords: 5, maxPhraseShare: 0.5 };

interface Topic {
  targetIndex: number;
  words: number;
}

interface Match {
  key: string;
  sentence: string;
  anchor: string;
  position: number;
}

export function proposeInternalLinks(articles: readonly ArticleInput[], settings: InterlinkingSettings = DEFAULT_INTERLINKING): ProposalOf<'interlinking'>[] {
  const docs = articles.map((a) => ({ article: a, sentences: sentences(a.text).filter((s) => !s.heading).map((s) => ({ text: s.text, tokens: tokenize(s.text) })) }));
  const topics = topicIndex(docs, settings);
  const maxWords = settings.maxPhraseWords;

  // One scan of every sentence: which topic phrases each article mentions, and where.
  const mentions = docs.map((doc) => {
    const found: Match[] = [];
    let position = 0;
    for (const s of doc.sentences) {
      for (let i = 0; i < s.tokens.length; i++) {
        const hit = longestTopicAt(s.tokens, i, maxWords, topics);
        if (!hit) continue;
        found.push({ key: hit.key, sentence: s.text, anchor: s.text.slice(s.tokens[i]!.start, s.tokens[i + hit.length - 1]!.end), position: position++ });
        i += hit.length - 1;
      }
    }
    return found;
  });

  // Phrases that nearly every article mentions ("coffee beans" on a coffee blog) make poor links.
  const others = Math.max(1, articles.length - 1);
  const mentionedBy = new Map<string, number>();
  for (const [i, found] of mentions.entries()) {
    for (const key of new Set(found.map((m) => m.key))) if (topics.get(key)!.targetIndex !== i) mentionedBy.set(key, (mentionedBy.get(key) ?? 0) + 1);
  }

  const byUrl = new Map(articles.map((a, i) => [normalizeUrl(a.url), i]));
  const inbound = articles.map(() => 0);
  for (const [i, a] of articles.entries()) {
    for (const target of new Set(a.links.map((l) => byUrl.get(normalizeUrl(l))))) if (target !== undefined && target !== i) inbound[target]! += 1;
  }

  const proposals: ProposalOf<'interlinking'>[] = [];
  for (const [sourceIndex, found] of mentions.entries()) {
    const source = articles[sourceIndex]!;
    const linked = new Set(source.links.map(normalizeUrl));
    const candidates = found
      .map((m) => ({ m, topic: topics.get(m.key)! }))
      .filter(({ m, topic }) => {
        if (topic.targetIndex === sourceIndex) return false;
        const share = (mentionedBy.get(m.key) ?? 0) / others;
        return share <= settings.maxPhraseShare && !linked.has(normalizeUrl(articles[topic.targetIndex]!.url));
      })
      // Longest phrase first (the most specific), then targets that have fewest links, then reading order.
      .sort((x, y) => y.topic.words - x.topic.words || inbound[x.topic.targetIndex]! - inbound[y.topic.targetIndex]! || x.m.position - y.m.position);
    const usedTargets = new Set<number>();
    for (const { m, topic } of candidates) {
      if (usedTargets.size >= settings.maxLinksPerSource) break;
      if (usedTargets.has(topic.targetIndex)) continue;
      usedTargets.add(topic.targetIndex);
      const target = articles[topic.targetIndex]!;
      proposals.push({
        kind: 'interlinking',
        sourceArticleId: source.id,
        sourceUrl: source.url,
        anchor: m.anchor,
        targetArticleId: target.id,
        targetUrl: target.url,
        sentence: m.sentence,
      });
    }
  }
  return proposals;
}

function longestTopicAt(tokens: Token[], i: number, maxWords: number, topics: Map<string, Topic>): { key: string; length: number } | null {
  if (tokens[i]!.stop) return null;
  let key = '';
  let best: { key: string; length: number } | null = null;
  for (let n = 1; n <= maxWords && i + n <= tokens.length; n++) {
    key = n === 1 ? tokens[i]!.norm : `${key} ${tokens[i + n - 1]!.norm}`;
    if (topics.has(key)) best = { key, length: n };
  }
  return best;
}

/** Topic phrase (normalised words joined by spaces) -> the one article it names. */
function topicIndex(docs: { article: ArticleInput; sentences: { tokens: Token[] }[] }[], settings: InterlinkingSettings): Map<string, Topic> {
  const owners = new Map<string, Set<number>>();
  const phraseWords = new Map<string, number>();
  for (const [i, doc] of docs.entries()) {
    for (const phrase of titlePhrases(doc.article.title, settings.maxPhraseWords)) {
      const key = phrase.join(' ');
      phraseWords.set(key, phrase.length);
      let set = owners.get(key);
      if (!set) owners.set(key, (set = new Set()));
      set.add(i);
    }
  }
  // Document frequency of single title words, for the "distinctive word" test below.
  const singleWords = new Set([...phraseWords].filter(([, n]) => n === 1).map(([k]) => k));
  const wordDf = new Map<string, number>();
  const wordTf = docs.map(() => new Map<string, number>());
  for (const [i, doc] of docs.entries()) {
    const seen = new Set<string>();
    for (const s of doc.sentences) {
      for (const t of s.tokens) {
        if (!singleWords.has(t.norm)) continue;
        wordTf[i]!.set(t.norm, (wordTf[i]!.get(t.norm) ?? 0) + 1);
        if (!seen.has(t.norm)) {
          seen.add(t.norm);
          wordDf.set(t.norm, (wordDf.get(t.norm) ?? 0) + 1);
        }
      }
    }
  }
  const topics = new Map<string, Topic>();
  for (const [key, set] of owners) {
    if (set.size !== 1) continue; // a phrase in two titles does not say which article to link
    const [targetIndex] = set as Set<number>;
    const words = phraseWords.get(key)!;
    if (words === 1) {
      // One word names a topic only if the target keeps using it and few other articles do.
      const tf = wordTf[targetIndex!]!.get(key) ?? 0;
      const df = wordDf.get(key) ?? 0;
      if (tf < 2 || df > Math.max(2, Math.ceil(docs.length * 0.1))) continue;
    }
    topics.set(key, { targetIndex: targetIndex!, words });
  }
  return topics;
}
