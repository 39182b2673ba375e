import { BlockList, isIP } from 'node:net';

/**
 * Which addresses a webhook may be delivered to. Refused by default: loopback, private (RFC 1918,
 * unique-local), link-local (incl. 169.254.169.254), shared address space (100.64.0.0/10),
 * multicast, unspecified, and reserved ranges. Operators may allow chosen CIDR ranges.
 */
const REFUSED_V4: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared_address'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link_local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const REFUSED_V6: Array<[string, number, string]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  // IPv4-compatible (deprecated, ::a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d) addresses.
  ['::', 96, 'reserved'],
  ['::ffff:0:0:0', 96, 'reserved'],
  ['64:ff9b::', 96, 'reserved'],
  ['64:ff9b:1::', 48, 'reserved'],
  ['100::', 64, 'reserved'],
  ['2001:db8::', 32, 'reserved'],
  // 6to4 embeds an IPv4 address and its relays are deprecated (RFC 7526).
  ['2002::', 16, 'reserved'],
  // Teredo (RFC 4380) embeds IPv4 addresses too (obfuscated), and is IETF protocol space (RFC 6890).
  ['2001::', 32, 'reserved'],
  // Benchmarking (RFC 5180; its IPv4 twin 198.18/15 is refused), documentation (RFC 9637), SRv6 SIDs (RFC 9602).
  ['2001:2::', 48, 'reserved'],
  ['3fff::', 20, 'reserved'],
  ['5f00::', 16, 'reserved'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link_local'],
  ['fec0::', 10, 'reserved'],
  ['ff00::', 8, 'multicast'],
];

export type RefusalReason = 'unspecified' | 'private' | 'shared_address' | 'loopback' | 'link_local' | 'reserved' | 'multicast';

const lists = new Map<string, BlockList>();
for (const [net, prefix, reason] of REFUSED_V4) addRange(reason, net, prefix, 'ipv4');
for (const [net, prefix, reason] of REFUSED_V6) addRange(reason, net, prefix, 'ipv6');
function addRange(reason: string, net: string, prefix: number, type: 'ipv4' | 'ipv6') {
  let list = lists.get(reason);
  if (!list) lists.set(reason, (list = new BlockList()));
  list.addSubnet(net, prefix, type);
}

/** Parses `10.0.0.0/8,::1/128` into a BlockList of operator-allowed ranges. */
export function parseAllowedRanges(spec: string | undefined): BlockList {
  const list = new BlockList();
  for (const part of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    // Digits only after one slash: `10.20.0.0/` read as /0 would allow every address.
    const [, net = '', prefixText] = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(part) ?? [];
    const type = isIP(net);
    if (type === 0) throw new Error(`not a CIDR range: ${part}`);
    const prefix = prefixText === undefined ? (type === 4 ? 32 : 128) : Number(prefixText);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (type === 4 ? 32 : 128)) throw new Error(`not a CIDR range: ${part}`);
    list.addSubnet(net, prefix, type === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

/** Why an address is refused, or null when deliveries may go there. */
export function refusalReason(address: string, allowed?: BlockList): RefusalReason | null {
  let ip = address.startsWith('[') ? address.slice(1, -1) : address;
  let type = isIP(ip);
  if (type === 0) return 'reserved';
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it carries.
  const mapped = type === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip) : null;
  if (mapped) {
    ip = mapped[1]!;
    type = 4;
  }
  const family = type === 4 ? 'ipv4' : 'ipv6';
  if (allowed?.check(ip, family)) return null;
  for (const [reason, list] of lists) if (list.check(ip, family)) return reason as RefusalReason;
  return null;
}

export type UrlProblem = string | null;

// C0 and C1 controls and DEL: the URL parser would drop some (tab, newline) silently and keep others.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A refused address class in words, with its article ("a link-local address"). */
export const REASON_PHRASES: Record<RefusalReason, string> = {
  unspecified: 'an unspecified address',
  private: 'a private address',
  shared_address: 'a shared address space address (100.64.0.0/10)',
  loopback: 'a loopback address',
  link_local: 'a link-local address',
  reserved: 'a reserved address',
  multicast: 'a multicast address',
};

/** A DNS host name as the URL parser leaves it (lower case, IDNs in punycode): no empty label, none over 63, no hyphen at a label's end. */
const isHostName = (host: string) =>
  host.length <= 253 && host.split('.').every((label) => /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/.test(label));

/**
 * Static checks of a webhook URL at creation: well-formed text, HTTPS, a real port, and no literal
 * refused address or `localhost` name. Names that resolve to refused addresses are caught when delivering.
 */
export function webhookUrlProblem(url: string, allowed?: BlockList): UrlProblem {
  if (CONTROL.test(url)) return 'url must not contain control characters';
  if (LONE_SURROGATE.test(url)) return 'url must be well-formed Unicode (it contains a lone surrogate)';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be a valid absolute URL';
  }
  if (parsed.protocol !== 'https:') return 'url must use https';
  // The URL as written is what is stored and shown: the parser's leniency (spaces, `https:host`,
  // backslashes, `https:///path`) would store text that is no HTTPS URL by RFC 3986.
  if (!/^https:\/\/[^/\\?#]/i.test(url) || /[\s\\]/.test(url)) return 'url must be written https://host/path, without spaces or backslashes';
  if (parsed.username || parsed.password) return 'url must not contain credentials';
  if (parsed.port === '0') return 'url must not use port 0';
  // A trailing dot names the same host (`localhost.` is `localhost`).
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) {
    const reason = refusalReason(host, allowed);
    if (reason) return `url points to ${REASON_PHRASES[reason]}, which webhooks may not target`;
  } else if (!isHostName(host)) {
    return 'url must name a host: labels of letters, digits, hyphens and underscores (no hyphen at either end), 1 to 63 characters each, separated by single dots';
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    // Delivery refuses a name when any address it resolves to is refused, and localhost is 127.0.0.1
    // (often ::1 too): accepted only when 127.0.0.1 is allowed, so what is created can be delivered.
    if (!allowed?.check('127.0.0.1', 'ipv4')) return 'url points to a loopback address, which webhooks may not target';
  }
  return null;
}
