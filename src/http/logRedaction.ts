import type { FastifyRequest } from 'fastify';

/**
 * The URL as request logs show it: no query string (inbox filters carry contact addresses) and no
 * path segment holding an address (`DELETE .../suppressions/{email}`). Bodies are never logged.
 */
export function loggedUrl(url: string): string {
  const path = url.split('?')[0] ?? '';
  return path
    .split('/')
    .map((segment) => (/@|%40/i.test(segment) ? '[redacted]' : segment))
    .join('/');
}

/** Fastify's default request log fields, with the URL passed through `loggedUrl`. */
export function requestLogSerializer(request: FastifyRequest) {
  return {
    method: request.method,
    url: loggedUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
