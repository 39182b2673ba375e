/**
 * Text helpers shared by the content agents' heuristics: words with their positions, a light
 * English stemmer (plurals only, so `beans` meets `bean`), sentences and headings, URL identity.
 * Pure, no I/O.
 */

export interface Token {
  /** Normalised form: lower case, accents removed, plural stripped. */
  norm: string;
  /** Offsets of the word in the string it came from. */
  start: number;
  end: number;
  stop: boolean;
}

export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an the and or but if then than so as at by for from in into of off on onto out to up with without about ' +
    'after before between through during under above below again further once here there when where why how what which who whom ' +
    'whose this that these those i me my we our you your he him his she her it its they them their is are was were be been ' +
    'being have has had do does did doing will would shall should can could may might must not no nor only own same too very ' +
    'just also all any both each few more most other some such s t don now get got make made use used using one two three ' +
    'first new way ways thing things lot lots much many every even still really well while because until yet let lets'
  ).split(' '),
);

/** Words that make a title a title rather than a topic ("A Beginner's Guide to …"). */
export const TITLE_FILLER: ReadonlySet<string> = new Set(
  (
    'guide guides beginner beginners recipe recipes explained understanding introduction intro choosing choose tips tip ' +
    'ultimate complete easy simple best basics basic everything need know step steps keep keeping better great quick ' +
    'how what why when which vs versus'
  ).split(' '),
);

/** Stopwords a phrase may hold inside it ("coffee to water ratio", "dial in espresso"), never at its edges. */
export const INNER_STOPWORDS: ReadonlySet<string> = new Set(['in', 'of', 'to', 'for', 'and', 'on', 'with']);

export function stem(word: string): string {
  let w = word;
  if (w.endsWith("'s") || w.endsWith('’s')) w = w.slice(0, -2);
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 4 && /(?:ches|shes|xes|sses)$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !/(?:ss|us|is|ous)$/.test(w)) return w.slice(0, -1);
  return w;
}

const normalized = new Map<string, string>();

/** Lower case, accents removed, plural stripped; memoised (a site's vocabulary is small, its word count is not). */
export function normalizeWord(word: string): string {
  let norm = normalized.get(word);
  if (norm === undefined) {
    const ascii = /^[\x00-\x7f]*$/.test(word);
    norm = stem((ascii ? word : word.normalize('NFD').replace(/\p{M}/gu, '')).toLowerCase().replace(/’/g, "'"));
    if (normalized.size > 200_000) normalized.clear();
    normalized.set(word, norm);
  }
  return norm;
}

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const m of text.matchAll(WORD)) {
    const norm = normalizeWord(m[0]);
    tokens.push({ norm, start: m.index, end: m.index + m[0].length, stop: STOPWORDS.has(norm) || STOPWORDS.has(m[0].toLowerCase()) });
  }
  return tokens;
}

export const words = (text: string): string[] => tokenize(text).map((t) => t.norm);

export function wordCount(text: string): number {
  let n = 0;
  for (const _ of text.matchAll(WORD)) n += 1;
  return n;
}

export interface Sentence {
  text: string;
  /** True for a paragraph that is a heading (short, one line, no closing full stop). */
  heading: boolean;
}

const SENTENCE_END = /(?<=[.!?…])["”')\]]*\s+(?=["“'(\[]?[\p{Lu}\p{N}])/u;

/** Paragraphs split on blank lines, then into sentences; headings kept whole and marked. */
export function sentences(text: string): Sentence[] {
  const out: Sentence[] = [];
  for (const raw of text.split(/\n\s*\n/)) {
    const paragraph = raw.trim();
    if (!paragraph) continue;
    if (isHeading(paragraph)) {
      out.push({ text: paragraph.replace(/^#+\s*/, ''), heading: true });
      continue;
    }
    for (const line of paragraph.split(/\n+/)) {
      for (const s of line.split(SENTENCE_END)) {
        const sentence = s.trim();
        if (sentence) out.push({ text: sentence, heading: false });
      }
    }
  }
  return out;
}

function isHeading(paragraph: string): boolean {
  if (paragraph.startsWith('#')) return true;
  if (paragraph.includes('\n')) return false;
  return wordCount(paragraph) <= 14 && !/[.:;,]$/.test(paragraph);
}

export const headings = (text: string): string[] => sentences(text).filter((s) => s.heading).map((s) => s.text);

/** One identity per page: lower-case host without `www.`, no fragment, no trailing slash. */
export function normalizeUrl(url: string): string {
  try {
    const u = new URL(url);
    const path = u.pathname.length > 1 ? u.pathname.replace(/\/+$/, '') : '';
    return `${u.host.toLowerCase().replace(/^www\./, '')}${path}${u.search}`;
  } catch {
    return url.trim().toLowerCase();
  }
}

/** Content words of a short text (a title, a heading, a keyword): stemmed, without stopwords. */
export const contentWords = (text: string, extraStop: ReadonlySet<string> = new Set()): string[] =>
  tokenize(text)
    .filter((t) => !t.stop && !extraStop.has(t.norm) && !/^\d+$/.test(t.norm))
    .map((t) => t.norm);

/**
 * The phrases of a title that name its topic: each run of content words (inner stopwords such as
 * "to" in "coffee to water ratio" allowed), and every part of it of two words or more that starts
 * and ends on a content word.
 */
export function titlePhrases(title: string, maxWords = 5): string[][] {
  const tokens = tokenize(title);
  const runs: string[][] = [];
  let run: string[] = [];
  const flush = () => {
    while (run.length && STOPWORDS.has(run[run.length - 1]!)) run.pop();
    if (run.length) runs.push(run);
    run = [];
  };
  for (const t of tokens) {
    const filler = TITLE_FILLER.has(t.norm) || /^\d+$/.test(t.norm);
    if (filler) flush();
    else if (!t.stop) run.push(t.norm);
    else if (INNER_STOPWORDS.has(t.norm) && run.length) run.push(t.norm);
    else flush();
  }
  flush();
  const phrases: string[][] = [];
  const seen = new Set<string>();
  for (const r of runs) {
    for (let i = 0; i < r.length; i++) {
      if (STOPWORDS.has(r[i]!)) continue;
      for (let j = i + 1; j <= Math.min(r.length, i + maxWords); j++) {
        const part = r.slice(i, j);
        if (STOPWORDS.has(part[part.length - 1]!)) continue;
        const key = part.join(' ');
        if (!seen.has(key)) {
          seen.add(key);
          phrases.push(part);
        }
      }
    }
  }
  return phrases;
}

export const daysBetween = (fromIso: string, toIso: string): number => Math.floor((Date.parse(toIso) - Date.parse(fromIso)) / 86_400_000);
