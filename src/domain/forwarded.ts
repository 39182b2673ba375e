import { bareHost, isOnOrUnder } from './domainName.ts';

/**
 * A pitch forwarded by a team member carries the prospect in the forwarded block
 * ("---------- Forwarded message ---------", "Begin forwarded message:", "-----Original Message-----")
 * as a `From: Name <address>` line. Returns that original sender, or null when there is none.
 */
export function originalSender(bodyText: string): { address: string; name: string | null } | null {
  const marker = /(-{2,}\s*Forwarded message\s*-{2,}|Begin forwarded message:|-{2,}\s*Original Message\s*-{2,})/i.exec(bodyText);
  if (!marker) return null;
  const block = bodyText.slice(marker.index, marker.index + 2_000);
  const from = /^\s*>?\s*From:\s*(.+)$/im.exec(block);
  if (!from) return null;
  const value = from[1]!.trim();
  const bracketed = /^(.*?)\s*<([^<>\s]+@[^<>\s]+)>/.exec(value);
  if (bracketed) {
    const name = bracketed[1]!.replace(/^["']|["']$/g, '').trim();
    return { address: bracketed[2]!.toLowerCase(), name: name || null };
  }
  const bare = /([^\s<>"]+@[^\s<>"]+)/.exec(value);
  return bare ? { address: bare[1]!.toLowerCase(), name: null } : null;
}

/**
 * Whose pitch a mail to a site's forwarding mailbox is. The forwarded block's sender only when a member
 * of the site's team forwarded it (`byTeamMember`: an address on the site's domain or a user of the
 * team): a prospect's own reply quoting the agent's mail ("-----Original Message-----", From: the agent)
 * made the agent mail itself, and anyone's mail naming a `From:` made it mail that third party. A block
 * whose sender is on the site's own domain names no prospect either (the agent, or a colleague).
 */
export function pitchSender(
  mail: { from: string; fromName: string | null; forwardedFrom: { address: string; name: string | null } | null },
  site: { domain: string },
  byTeamMember: boolean,
): { from: string; fromName: string | null; forwarded: boolean } {
  const original = mail.forwardedFrom;
  if (!original || !byTeamMember || onDomain(original.address, site.domain)) return { from: mail.from, fromName: mail.fromName, forwarded: false };
  return { from: original.address, fromName: original.name, forwarded: true };
}

/**
 * Whether the address is on the site's domain: the domain itself (with or without `www.`), a
 * subdomain of it, or the domain the site's host is under (the staff of `blog.acme.test` write from
 * `acme.test`).
 */
export function onDomain(address: string, siteDomain: string): boolean {
  const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
  const site = bareHost(siteDomain);
  return isOnOrUnder(domain, site) || (isOnOrUnder(site, domain) && domain.includes('.'));
}

/** `forward+<token>@<mail domain>` → the token, or null for any other address. */
export function forwardingToken(address: string, mailDomain: string): string | null {
  const m = /^forward\+([a-z0-9]{1,64})@(.+)$/i.exec(address.trim());
  if (!m || m[2]!.toLowerCase() !== mailDomain.toLowerCase()) return null;
  return m[1]!.toLowerCase();
}
