/**
 * RFC 6750 §3 challenges of the MCP endpoint, with RFC 9728's resource_metadata so a client that
 * knows nothing but the URL finds the authorization server from the 401 alone.
 */
export const protectedResourceMetadataUrl = (base: string) => `${base}/.well-known/oauth-protected-resource/mcp`;

const quoted = (value: string) => `"${value.replace(/["\\]/g, '')}"`;

export function bearerChallenge(
  base: string,
  params: { scope: readonly string[]; error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope'; description?: string },
): string {
  const parts = [`resource_metadata=${quoted(protectedResourceMetadataUrl(base))}`, `scope=${quoted(params.scope.join(' '))}`];
  if (params.error) parts.unshift(`error=${quoted(params.error)}`);
  if (params.description) parts.push(`error_description=${quoted(params.description)}`);
  return `Bearer ${parts.join(', ')}`;
}

/**
 * Whether the client asked for an SSE stream rather than one JSON body: every client must accept
 * both; the one it lists with the higher q (or first, at equal q) wins.
 */
export function prefersEventStream(accept: string | undefined): boolean {
  const ranked = (accept ?? '')
    .split(',')
    .map((part, index) => {
      const [type, ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean);
      return { type: type!.trim(), q: q ? Number(q[1]) : 1, index };
    })
    .filter((m) => m.type === 'application/json' || m.type === 'text/event-stream')
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return ranked[0]?.type === 'text/event-stream';
}
