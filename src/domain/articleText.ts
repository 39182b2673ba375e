import { decodeHTML } from 'entities';
import { bareHost } from './domainName.ts';

/**
 * Plain text and internal links out of an article's HTML, without an HTML parser dependency: one
 * forward scan (indexOf, never a regular expression over the whole document), so hostile markup
 * costs linear time. Paragraph structure is kept: block elements become blank-line breaks.
 */

/** Elements whose content is never text: dropped with everything inside. */
const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'svg', 'iframe', 'object', 'canvas', 'select', 'textarea']);
const BLOCKS = new Set([
  'p', 'div', 'section', 'article', 'main', 'header', 'footer', 'aside', 'nav', 'blockquote', 'pre', 'ul', 'ol', 'li', 'dl', 'dt', 'dd',
  'table', 'thead', 'tbody', 'tr', 'td', 'th', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'figure', 'figcaption', 'hr', 'br', 'form', 'address',
]);

const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', ndash: '–', mdash: '—', hellip: '…', rsquo: '’', lsquo: '‘',
  rdquo: '”', ldquo: '“', copy: '©', reg: '®', trade: '™', eacute: 'é', egrave: 'è', agrave: 'à', ccedil: 'ç', uuml: 'ü', ouml: 'ö', auml: 'ä', szlig: 'ß',
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '';
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

interface Tag {
  name: string;
  closing: boolean;
  /** The tag's text between `<` and `>`. */
  raw: string;
}

/**
 * One linear pass over the markup: text runs and tags in document order. Comments, declarations and
 * hidden elements (with their content) are skipped; an unterminated tag, comment or hidden element
 * ends the document. Every search moves forward, so the cost is linear in the input.
 */
function scanHtml(html: string, onText: (text: string) => void, onTag: (tag: Tag) => void): void {
  let i = 0;
  while (i < html.length) {
    const open = html.indexOf('<', i);
    if (open === -1) {
      onText(html.slice(i));
      return;
    }
    if (open > i) onText(html.slice(i, open));
    if (html.startsWith('<!--', open)) {
      const end = html.indexOf('-->', open + 4);
      if (end === -1) return;
      i = end + 3;
      continue;
    }
    const close = html.indexOf('>', open + 1);
    if (close === -1) return;
    const raw = html.slice(open + 1, close);
    const match = /^(\/?)([a-z][a-z0-9]{0,15})/i.exec(raw);
    i = close + 1;
    if (!match) {
      // `<!doctype>`, `<?xml?>`: no text. A lone `<` followed by a space is text.
      if (/^[\s\d=]/.test(raw)) onText('<' + raw + '>');
      continue;
    }
    const name = match[2]!.toLowerCase();
    const closing = match[1] === '/';
    if (!closing && HIDDEN.has(name) && !raw.endsWith('/')) {
      const end = closingTagAt(html, name, i);
      if (end === -1) return;
      const after = html.indexOf('>', end);
      if (after === -1) return;
      i = after + 1;
      continue;
    }
    onTag({ name, closing, raw });
  }
}

/**
 * Where `</name` (any case) starts at or after `from`, -1 if nowhere. No lowercased copy of the
 * document: with one made up front, V8's optimised scanHtml went quadratic (a 480 KB article of
 * `<p>` paragraphs took 80 s once the function had seen large inputs of other shapes).
 */
function closingTagAt(html: string, name: string, from: number): number {
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    if (html.slice(at + 2, at + 2 + name.length).toLowerCase() === name) return at;
  }
  return -1;
}

/**
 * The article's text: paragraphs separated by a blank line, whitespace inside a paragraph collapsed.
 * `mail` (an inbound mail's HTML): a link's absolute URL follows its text as ` [url]` unless the text
 * shows it already (asks name their URLs in links), every entity is decoded, and a <blockquote>'s
 * paragraphs are quoted. One pass: linear in the HTML's length.
 */
export function htmlToText(html: string, options: { mail?: boolean } = {}): string {
  const parts: string[] = [];
  let anchor: { href: string; start: number } | null = null;
  let depth = 0;
  // A mail's HTML: every entity decoded (the triage reads `&euro;50` as money), and a <blockquote>'s
  // paragraphs prefixed with `> ` as mail clients quote, so quoted history is told from the sender's words.
  const decode = options.mail ? (text: string) => decodeHTML(text).replaceAll(QUOTE_MARK, '') : decodeEntities;
  scanHtml(
    html,
    (text) => parts.push(decode(text)),
    (tag) => {
      if (options.mail && tag.name === 'blockquote') depth = Math.max(0, depth + (tag.closing ? -1 : 1));
      if (BLOCKS.has(tag.name)) parts.push('\n\n' + QUOTE_MARK.repeat(Math.min(depth, MAX_QUOTE_DEPTH)));
      if (!options.mail || tag.name !== 'a') return;
      if (!tag.closing) {
        const href = hrefOf(tag.raw);
        anchor = href && /^(?:https?:\/\/|mailto:)/i.test(href) ? { href, start: parts.length } : null;
      } else if (anchor) {
        const shown = parts.slice(anchor.start).join('');
        const plain = anchor.href.replace(/^mailto:/i, '');
        if (!shown.includes(plain)) parts.push(` [${plain}]`);
        anchor = null;
      }
    },
  );
  const text = normaliseParagraphs(parts.join(''));
  return options.mail ? quoted(text) : text;
}

/** Marks the start of a paragraph inside a <blockquote>, once per level (never in the text: removed from it). */
const QUOTE_MARK = '\u0001';
/**
 * Quote levels shown at most: deeper ones read as this deep. Marks for every level made the text grow
 * with the square of the nesting (a hostile mail of 30,000 nested blockquotes took 1.6 GB and seconds).
 */
const MAX_QUOTE_DEPTH = 20;

function quoted(text: string): string {
  return text
    .split('\n\n')
    .map((paragraph) => {
      const lead = /^[\u0001 ]*/.exec(paragraph)![0];
      const level = lead.split(QUOTE_MARK).length - 1;
      const rest = paragraph.slice(lead.length).replaceAll(QUOTE_MARK, '');
      return rest ? '> '.repeat(level) + rest : '';
    })
    .filter((p) => p !== '')
    .join('\n\n');
}

function hrefOf(raw: string): string | null {
  const match = /\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"']+))/i.exec(raw);
  return match ? decodeEntities((match[1] ?? match[2] ?? match[3] ?? '').trim()) : null;
}

/** Plain text given by a client: the same paragraph layout as extracted text. */
export function normaliseParagraphs(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t\u00a0]*\n/)
    .map((p) => p.replace(/[\s\u00a0]+/g, ' ').trim())
    .filter((p) => p !== '')
    .join('\n\n');
}

/**
 * Absolute URLs of the body's links that point at the site itself (the domain or its `www.`
 * twin), resolved against the article's URL, without fragment, each once, in document order.
 */
export function internalLinks(html: string, articleUrl: string, siteDomain: string): string[] {
  const site = bareHost(siteDomain);
  const found = new Set<string>();
  scanHtml(html, () => {}, (tag) => {
    if (tag.name !== 'a' || tag.closing) return;
    const href = hrefOf(tag.raw);
    if (!href || href.startsWith('#')) return;
    let url: URL;
    try {
      url = new URL(href, articleUrl);
    } catch {
      return;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return;
    if (bareHost(url.hostname) !== site) return;
    url.hash = '';
    found.add(url.toString());
  });
  return [...found];
}

/** True when the URL's host is the site's domain (or its `www.` twin). */
export const isOnSite = (url: string, siteDomain: string) => {
  try {
    return bareHost(new URL(url).hostname) === bareHost(siteDomain);
  } catch {
    return false;
  }
};

export const wordCount = (text: string) => (text.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? []).length;
