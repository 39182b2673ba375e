import type { FastifyInstance } from 'fastify';

/**
 * The methods the REST API answers on a path, for a 405 with `Allow` (RFC 9110 §15.5.6) where a
 * route exists for another method: `PUT …/webhooks` is not a missing resource. Learnt from the
 * routes as they are registered; their patterns hold only `:name` parameters, one segment each.
 * Segments are compared percent-decoded, as the router matches them (`webhook%73` is `webhooks`).
 */
export function restMethodsOfPath(app: FastifyInstance, prefix = '/api/v1/'): (path: string) => string[] {
  const routes = new Map<string, { segments: (string | null)[]; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(prefix)) return;
    const known = routes.get(route.url) ?? { segments: route.url.split('/').map((s) => (s.startsWith(':') ? null : s)), methods: new Set<string>() };
    for (const method of [route.method].flat()) known.methods.add(method);
    routes.set(route.url, known);
  });
  return (path) => {
    const segments = path.split('/').map(decodedSegment);
    const methods = new Set<string>();
    for (const { segments: pattern, methods: of } of routes.values()) {
      if (pattern.length === segments.length && pattern.every((s, i) => (s === null ? segments[i] !== '' : s === segments[i]))) for (const m of of) methods.add(m);
    }
    return [...methods].sort();
  };
}

/** A path segment percent-decoded (a `%2F` in it stays inside it); as sent when it does not decode. */
function decodedSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
