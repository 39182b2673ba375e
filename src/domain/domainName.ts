const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lower-case LDH labels (letters, digits, inner hyphens; IDNs in their xn-- form), `minLabels` or more, 253 characters at most. */
export function hasDomainLabels(domain: string, minLabels = 1): boolean {
  const labels = domain.split('.');
  return domain.length <= 253 && labels.length >= minLabels && labels.every((label) => LABEL.test(label));
}

/** A host name lower-cased, without a leading `www.`. */
export const bareHost = (host: string) => host.toLowerCase().replace(/^www\./, '');

/** The URL's host as `bareHost` gives it; null for a URL the parser does not take. */
export function urlHost(url: string): string | null {
  try {
    return bareHost(new URL(url).hostname);
  } catch {
    return null;
  }
}

/** Whether `host` is `domain` or a subdomain of it (both bare). */
export const isOnOrUnder = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);
