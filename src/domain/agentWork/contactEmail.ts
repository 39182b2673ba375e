/**
 * Finding a prospect's contact address in its pages: `mailto:` links, addresses written out, and
 * the usual obfuscations (`jane [at] example [dot] com`, `jane(at)example.com`, HTML entities).
 * Addresses on the prospect's own domain are preferred, then role addresses people answer
 * (editor@, hello@, contact@ …); no-reply addresses are never chosen. Pure.
 */

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', commat: '@', period: '.' };

export function decodeEntities(html: string): string {
  return html.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
    if (code[0] === '#') {
      const n = code[1] === 'x' || code[1] === 'X' ? Number.parseInt(code.slice(2), 16) : Number.parseInt(code.slice(1), 10);
      return Number.isFinite(n) && n > 0 && n < 0x110000 ? String.fromCodePoint(n) : whole;
    }
    return ENTITIES[code.toLowerCase()] ?? whole;
  });
}

const EMAIL = /[a-z0-9][a-z0-9._%+-]{0,63}@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}/gi;
const AT = String.raw`\s*(?:\[\s*at\s*\]|\(\s*at\s*\)|\{\s*at\s*\}|\s+at\s+)\s*`;
const DOT = String.raw`\s*(?:\[\s*dot\s*\]|\(\s*dot\s*\)|\{\s*dot\s*\}|\s+dot\s+|\.)\s*`;
const OBFUSCATED = new RegExp(String.raw`([a-z0-9][a-z0-9._%+-]{0,63})${AT}((?:[a-z0-9-]{1,63}${DOT})+[a-z]{2,24})\b`, 'gi');

/** Every address the page shows, in order of appearance, lower case, without repeats. */
export function extractEmails(html: string): string[] {
  const text = decodeEntities(html);
  const found: string[] = [];
  const add = (email: string) => {
    const e = email.toLowerCase().replace(/\.+$/, '');
    if (/^[^@\s]+@[^@\s]+\.[a-z]{2,}$/.test(e) && !found.includes(e)) found.push(e);
  };
  for (const m of text.matchAll(/mailto:([^"'?>\s]+)/gi)) {
    try {
      add(decodeURIComponent(m[1]!));
    } catch {
      add(m[1]!);
    }
  }
  const visible = text.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/gi, ' ').replace(/<[^>]+>/g, ' ');
  for (const m of visible.matchAll(EMAIL)) add(m[0]);
  for (const m of visible.matchAll(OBFUSCATED)) {
    const domain = m[2]!.replace(new RegExp(DOT, 'gi'), '.');
    add(`${m[1]}@${domain}`);
  }
  // Image file names that look like addresses (logo@2x.png) are not contacts.
  return found.filter((e) => !/\.(?:png|jpe?g|gif|svg|webp|css|js)$/.test(e));
}

const ROLE_ORDER = ['editor', 'editors', 'hello', 'contact', 'partnerships', 'partner', 'outreach', 'press', 'media', 'info', 'team', 'office'];
const NEVER = /^(?:no-?reply|do-?not-?reply|mailer-daemon|postmaster|abuse|bounce[s]?|unsubscribe)\b/;

const registrable = (host: string) => host.toLowerCase().replace(/^www\./, '').split('.').slice(-2).join('.');

export interface ChosenContact {
  email: string;
  /** True when the address is on the prospect's own domain. */
  onDomain: boolean;
}

/** The address to pitch: on the prospect's domain first, then a role address, then the first found. */
export function chooseContact(emails: readonly string[], prospectUrl: string): ChosenContact | null {
  let host = '';
  try {
    host = new URL(prospectUrl).hostname;
  } catch {
    host = '';
  }
  const domain = host ? registrable(host) : '';
  const usable = emails.filter((e) => !NEVER.test(e.split('@')[0]!));
  const rank = (e: string) => {
    const [local, at] = e.split('@') as [string, string];
    const onDomain = domain !== '' && (registrable(at) === domain || at === host);
    const role = ROLE_ORDER.indexOf(local.split(/[+.]/)[0]!);
    return { e, onDomain, score: (onDomain ? 0 : 1000) + (role === -1 ? 100 : role) };
  };
  const ranked = usable.map(rank).sort((a, b) => a.score - b.score);
  const best = ranked[0];
  return best ? { email: best.e, onDomain: best.onDomain } : null;
}

/** Same-site links that lead to a contact or about page, by the link's path or its words; at most `max`. */
export function contactPageLinks(html: string, pageUrl: string, max = 3): string[] {
  const base = new URL(pageUrl);
  const links: { url: string; score: number }[] = [];
  for (const m of html.matchAll(/<a\b[^>]*\bhref\s*=\s*["']([^"']+)["'][^>]*>([\s\S]*?)<\/a>/gi)) {
    const href = decodeEntities(m[1]!);
    const words = decodeEntities(m[2]!.replace(/<[^>]+>/g, ' ')).toLowerCase();
    if (/^(?:mailto|tel|javascript):/i.test(href)) continue;
    let url: URL;
    try {
      url = new URL(href, base);
    } catch {
      continue;
    }
    if (url.host !== base.host) continue;
    const hay = `${url.pathname.toLowerCase()} ${words}`;
    const score = /contact|get in touch|kontakt|write for us|write-for-us/.test(hay) ? 0 : /about|team|impressum|masthead/.test(hay) ? 1 : -1;
    if (score < 0) continue;
    url.hash = '';
    const key = url.toString();
    if (key !== base.toString() && !links.some((l) => l.url === key)) links.push({ url: key, score });
  }
  return links.sort((a, b) => a.score - b.score).slice(0, max).map((l) => l.url);
}

/** What the home page says the site is about: its title, meta description and headings. */
export function pageTopicText(html: string): string {
  const parts: string[] = [];
  const title = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  if (title) parts.push(title[1]!);
  for (const m of html.matchAll(/<meta\b[^>]*name\s*=\s*["'](?:description|keywords)["'][^>]*>/gi)) {
    const content = /content\s*=\s*["']([^"']*)["']/i.exec(m[0]);
    if (content) parts.push(content[1]!);
  }
  for (const m of html.matchAll(/<h[1-3]\b[^>]*>([\s\S]*?)<\/h[1-3]>/gi)) parts.push(m[1]!.replace(/<[^>]+>/g, ' '));
  return decodeEntities(parts.join('. ')).replace(/\s+/g, ' ').trim();
}
