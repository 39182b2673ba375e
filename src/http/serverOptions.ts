import type { FastifyError, FastifyReply, FastifyServerOptions } from 'fastify';
import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config.ts';
import { DEFAULT_BODY_LIMIT } from '../app.ts';
import { errorBody } from './errorHandler.ts';
import { newRequestId } from './requestId.ts';
import { isPagePath, sendRefusalPage } from './web/html.ts';

/** The settings of `serverOptions` that bound what one client can hold. */
export type ServerLimits = Pick<Config, 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS' | 'HTTP_MAX_CONNECTIONS' | 'TRUST_PROXY'>;

/**
 * The fastify options of the service, one place for `server.ts` and the tests: the node HTTP server
 * with its slow-client bounds and connection cap, and the envelope on errors fastify and node
 * answer themselves (a path parameter over the length limit, an oversized or malformed header
 * block, a request that outlasts its timeout).
 *
 * - A request (headers and body) must arrive within HTTP_REQUEST_TIMEOUT_MS, its headers within
 *   HTTP_HEADERS_TIMEOUT_MS; node checks both every `connectionsCheckingInterval` and answers 408.
 * - An idle keep-alive connection closes after HTTP_KEEP_ALIVE_TIMEOUT_MS; a socket silent for the
 *   request timeout is closed.
 * - Past HTTP_MAX_CONNECTIONS open sockets, node closes new ones at once: the process stays below
 *   its file limit, so it keeps accepting as soon as slow connections are cut.
 */
export function serverOptions(config: ServerLimits): FastifyServerOptions {
  const requestTimeout = config.HTTP_REQUEST_TIMEOUT_MS;
  // At most the request timeout (loadConfig sees to it: node refuses a longer one).
  const headersTimeout = config.HTTP_HEADERS_TIMEOUT_MS;
  // Node's default check runs every 30 s, which would let a 1 s bound hold a socket for 30 s.
  const connectionsCheckingInterval = Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4)));
  return {
    bodyLimit: DEFAULT_BODY_LIMIT,
    // find-my-way's default (100) cut off a suppressed address a DELETE names (up to 320 characters,
    // 3 bytes each once percent-encoded); the routes' own schemas bound each parameter.
    routerOptions: { maxParamLength: 1_000 },
    trustProxy: config.TRUST_PROXY,
    // fastify's default counts from 1 in each process: the log's and the events' request ids would repeat across restarts.
    genReqId: newRequestId,
    // A request during the close is answered by refuseWhileClosing (http/shuttingDown.ts), in the service's envelope.
    return503OnClosing: false,
    // Also what fastify itself reads (e.g. for its config); the server below is built with the same values.
    requestTimeout,
    connectionTimeout: requestTimeout,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    serverFactory: (handler) => {
      // requireHostHeader: node answered an HTTP/1.1 request without Host itself, an empty 400; app.ts answers it in the envelope.
      const server = createServer({ requestTimeout, headersTimeout, keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS, connectionsCheckingInterval, requireHostHeader: false }, handler);
      // A socket silent past the request timeout is closed; a little later than node's own request
      // check, so a request whose body stopped arriving gets its 408 first rather than a bare close.
      server.setTimeout(requestTimeout + 2 * connectionsCheckingInterval + 250);
      server.maxConnections = config.HTTP_MAX_CONNECTIONS;
      return server;
    },
    clientErrorHandler: envelopedClientError,
    frameworkErrors: (error: FastifyError, request, reply: FastifyReply) => {
      reply.header('x-request-id', request.id);
      const page = isPagePath(request.url);
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
        const message = 'A path parameter exceeds the maximum length.';
        return page ? sendRefusalPage(reply, 414, message) : reply.status(414).send(errorBody('URI_TOO_LONG', message));
      }
      if (error.code === 'FST_ERR_BAD_URL') {
        const message = 'The request path is not a valid URL.';
        return page ? sendRefusalPage(reply, 400, message) : reply.status(400).send(errorBody('VALIDATION_ERROR', message));
      }
      return reply.status(500).send(errorBody('INTERNAL_ERROR', 'Internal server error.'));
    },
  };
}

/** Node's own answers to a broken or slow request (plain 400, 431, 408), in the service's envelope. */
function envelopedClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ([408, 'REQUEST_TIMEOUT', 'The request did not arrive within the time limit.'] as const)
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? ([431, 'HEADERS_TOO_LARGE', 'The request header block exceeds the size limit.'] as const)
        : ([400, 'VALIDATION_ERROR', 'Malformed HTTP request.'] as const);
  // As node does: answer only when no response has started on this socket.
  const inProgress = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !inProgress?.headersSent) {
    const body = JSON.stringify(errorBody(code, message));
    const reason = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[status];
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}
