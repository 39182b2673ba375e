import type { FastifyInstance } from 'fastify';

/**
 * The methods the REST API answers on a path, for a 405 with `Allow` (RFC 9110 §15.5.6) where a
 * route exists for another method: `PUT …/webhooks` is not a missing resource. Learnt from the
 * routes as they are registered; their patterns hold only `:name` parameters, one segment each.
 */
export function restMethodsOfPath(app: FastifyInstance, prefix = '/api/v1/'): (path: string) => string[] {
  const routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(prefix)) return;
    const known = routes.get(route.url) ?? { pattern: patternOf(route.url), methods: new Set<string>() };
    for (const method of [route.method].flat()) known.methods.add(method);
    routes.set(route.url, known);
  });
  return (path) => {
    const methods = new Set<string>();
    for (const { pattern, methods: of } of routes.values()) if (pattern.test(path)) for (const m of of) methods.add(m);
    return [...methods].sort();
  };
}

const patternOf = (url: string) =>
  new RegExp(`^${url.split('/').map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`);
