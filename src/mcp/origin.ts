/** Loopback hosts as a browser names them in an Origin (a local MCP Inspector, a desktop app's web view). */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a browser page of `origin` may call /mcp (MCP Streamable HTTP: servers must validate
 * Origin against DNS rebinding, 403 otherwise). A request without one (a desktop or server client)
 * is not a browser's and passes. Allowed: the service's own origin, loopback origins on any port,
 * and MCP_ALLOWED_ORIGINS (`*`: any).
 */
export function originAllowed(origin: string | undefined, publicBaseUrl: string, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  if (allowed.includes('*') || allowed.includes(origin)) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // `null` (a sandboxed frame, a file) or garbage
  }
  if (url.origin === new URL(publicBaseUrl).origin) return true;
  return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK.has(url.hostname);
}
