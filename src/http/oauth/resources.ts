/**
 * RFC 8707 resource indicators: the protected resources this authorization server issues tokens
 * for. The MCP endpoint is one (`<base>/mcp`, the resource its RFC 9728 metadata names); the service
 * as a whole (`<base>`) is the other. Any other resource is `invalid_target`.
 */
export const mcpResource = (base: string) => `${base}/mcp`;

/**
 * The well-known URL paths of a metadata document (RFC 8414 §3.1, RFC 9728 §3.1) for an identifier
 * `<base><suffix>`: the one inserted between the host and the identifier's path (where clients look
 * first, the MCP SDK only there for an issuer with a path), and the one under `<base>` that a reverse
 * proxy stripping the base path hands to this service as the same path.
 */
export function wellKnownPaths(base: string, wellKnown: string, suffix = ''): string[] {
  const path = `${new URL(base).pathname.replace(/\/+$/, '')}${suffix}`;
  return [...new Set([`/.well-known/${wellKnown}${path}`, `/.well-known/${wellKnown}${suffix}`])];
}

/** The served resource `raw` names (normalised: no trailing slash), or why it names none. */
export function servedResource(base: string, raw: string): { resource: string } | { problem: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'resource must be an absolute URI.' };
  }
  if (raw.includes('#')) return { problem: 'resource must not contain a fragment.' };
  const normalised = `${url.origin}${url.pathname.replace(/\/+$/, '')}${url.search}`;
  for (const served of [base, mcpResource(base)]) if (normalised === served) return { resource: served };
  return { problem: `This server issues tokens for ${mcpResource(base)} and ${base} only.` };
}
