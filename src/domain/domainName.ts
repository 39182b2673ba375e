const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lower-case LDH labels (letters, digits, inner hyphens; IDNs in their xn-- form), `minLabels` or more, 253 characters at most. */
export function hasDomainLabels(domain: string, minLabels = 1): boolean {
  const labels = domain.split('.');
  return domain.length <= 253 && labels.length >= minLabels && labels.every((label) => LABEL.test(label));
}
