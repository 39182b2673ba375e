import type { Ask } from '../../domain/ingestion.ts';
import type { ExtractionInput, ExtractionOutcome, Extractor } from '../../ports/extractor.ts';
import { bareHost, isOnOrUnder, urlHost } from '../../domain/domainName.ts';

const URL_RE = /\bhttps?:\/\/[^\s<>"'()\[\]{}]+/gi;
/** Words of a link request: without one, a message with links is not an ask. */
const ASK_CUE = /\b(link(?:ing|ed|s)?|backlinks?|hyperlinks?|mention(?:ing)?|referenc(?:e|ing)|cit(?:e|ing)|anchor)\b/i;
const TARGET_CUE = /\b(link(?:ing)?(?: back)? to|pointing to|points to|target(?: url| page| link)?|mention(?:ing)?|referenc(?:e|ing)|cit(?:e|ing)|to our|to my|our (?:page|guide|article|post|tool|resource)|my (?:page|guide|article|post|tool|resource))\b[^.\n]{0,40}$/i;
const SOURCE_CUE = /\b(source(?: url| page)?|your (?:article|post|page|blog(?: post)?|guide|piece)|on the page|in the article|in your|on your|at)\b[^.\n]{0,40}$/i;
const NOISE = /unsubscribe|opt[-_ ]?out|list-manage|mailto:|\/privacy|\/terms/i;
/**
 * At most this many asks per message, as the language-model adapter's schema allows: a pitch never
 * asks for more, and each ask scans the rest of the body, so an unbounded count would let one large
 * body of distinct URLs hold the event loop for seconds and open thousands of conversations.
 */
export const MAX_ASKS = 20;

/**
 * The offline default: reads typical link-building pitches with patterns, no network. It finds the
 * URL the sender wants linked (target), the page of the site where the link should go (source: a
 * URL on the site's own domain, or one introduced as "your article ..."), the anchor text and a
 * suggested sentence. A message with no link request and no foreign URL yields no asks (unactionable).
 */
export class OfflineExtractor implements Extractor {
  readonly name = 'offline';

  async extract(input: ExtractionInput): Promise<ExtractionOutcome> {
    return { asks: extractAsks(input), extractor: this.name };
  }
}

export function extractAsks({ subject, bodyText, siteDomain }: ExtractionInput): Ask[] {
  const text = `${subject}\n${bodyText}`;
  if (!ASK_CUE.test(text)) return [];
  const segments = splitIntoItems(bodyText);
  const globalSources = findUrls(bodyText).filter((u) => isSource(u, bodyText, siteDomain));
  const asks: Ask[] = [];
  const seen = new Set<string>();
  for (const segment of segments) {
    if (asks.length >= MAX_ASKS) break;
    const urls = findUrls(segment);
    const sources = urls.filter((u) => isSource(u, segment, siteDomain));
    const targets = urls.filter((u) => !sources.includes(u));
    for (const target of targets) {
      if (asks.length >= MAX_ASKS) break;
      if (seen.has(target.url)) continue;
      seen.add(target.url);
      const after = segment.slice(target.index);
      asks.push({
        targetUrl: target.url,
        anchorText: findAnchor(after) ?? findAnchor(segment) ?? (segments.length === 1 ? findAnchor(bodyText) : null),
        suggestedSentence: findSentence(after) ?? findSentence(segment) ?? (segments.length === 1 ? findSentence(bodyText) : null),
        sourceUrl: sources[0]?.url ?? (globalSources.length === 1 ? globalSources[0]!.url : null),
      });
    }
  }
  return asks;
}

interface FoundUrl {
  url: string;
  index: number;
}

function findUrls(text: string): FoundUrl[] {
  const found: FoundUrl[] = [];
  for (const m of text.matchAll(URL_RE)) {
    const url = m[0].replace(/[.,;:!?]+$/, '');
    if (NOISE.test(url) || NOISE.test(text.slice(Math.max(0, m.index - 30), m.index))) continue;
    found.push({ url, index: m.index });
  }
  return found;
}

function isSource(found: FoundUrl, text: string, siteDomain: string): boolean {
  const host = urlHost(found.url);
  if (host && isOnOrUnder(host, bareHost(siteDomain))) return true;
  const before = text.slice(Math.max(0, found.index - 60), found.index);
  return SOURCE_CUE.test(before) && !TARGET_CUE.test(before);
}

/** Numbered or bulleted items each holding a URL are separate asks; otherwise the body is one. */
function splitIntoItems(body: string): string[] {
  const lines = body.split(/\r?\n/);
  const items: string[] = [];
  let current: string[] | null = null;
  for (const line of lines) {
    if (/^\s*(?:\d+[.)]|[-*•])\s+/.test(line)) {
      if (current) items.push(current.join('\n'));
      current = [line];
    } else if (current && line.trim() !== '') {
      current.push(line);
    } else if (current) {
      items.push(current.join('\n'));
      current = null;
    }
  }
  if (current) items.push(current.join('\n'));
  const withUrls = items.filter((i) => findUrls(i).length > 0);
  return withUrls.length >= 2 ? withUrls : [body];
}

const QUOTED = String.raw`["“”'‘’]([^"“”'‘’\n]{1,200})["“”'‘’]`;
const ANCHOR_RES = [
  new RegExp(String.raw`anchor(?:\s+text)?\s*(?:[:=-]|could be|would be|of|like|such as)?\s*${QUOTED}`, 'i'),
  /anchor(?:\s+text)?\s*[:=]\s*([^\n.;!?"“]{1,120})/i,
  new RegExp(String.raw`${QUOTED}\s+as\s+(?:the\s+)?anchor`, 'i'),
];
const SENTENCE_RES = [
  new RegExp(String.raw`(?:suggested|proposed|example|sample)\s+(?:sentence|text|copy|line|snippet)\s*[:=-]?\s*${QUOTED}`, 'i'),
  /(?:suggested|proposed|example|sample)\s+(?:sentence|text|copy|line|snippet)\s*[:=]\s*([^\n]{1,400})/i,
  /(?:something like|for example|e\.g\.)\s*[:,]?\s*["“]([^"”\n]{10,400})["”]/i,
];

function findAnchor(text: string): string | null {
  for (const re of ANCHOR_RES) {
    const m = re.exec(text);
    if (m?.[1]) return clean(m[1]);
  }
  return null;
}

function findSentence(text: string): string | null {
  for (const re of SENTENCE_RES) {
    const m = re.exec(text);
    if (m?.[1]) return clean(m[1]);
  }
  return null;
}

const clean = (s: string) => s.trim().replace(/^["“'‘]|["”'’]$/g, '').trim() || null;
