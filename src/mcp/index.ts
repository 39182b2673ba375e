import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import fp from 'fastify-plugin';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SEVERAL_AUTHORIZATIONS, authorizationHeader, bearerToken, resolveCredential } from '../http/authenticate.ts';
import type { Credential } from '../http/credentials.ts';
import { errorBody } from '../http/errorHandler.ts';
import { INVALID_UTF8_BODY } from '../http/charset.ts';
import { mcpResource, wellKnownPaths } from '../http/oauth/resources.ts';
import { bearerChallenge, prefersEventStream } from './challenge.ts';
import { invalidRequest, refusedBatch } from './batches.ts';
import { invalidParams } from './invalidParams.ts';
import { originAllowed } from './origin.ts';
import { mcpServerFor } from './server.ts';
import { ToolRegistry } from './toolRegistry.ts';
import { GRANT_TOOLS, MCP_TOOLS } from './tools/index.ts';
import { jsonRpcError } from './jsonRpcError.ts';

/** Why a presented credential is not good for /mcp; null when it is. */
function refusal(credential: Credential | null, resource: string): string | null {
  if (!credential) return 'The access token is missing, unknown, expired or revoked.';
  if (credential.kind !== 'oauth_access_token') return 'MCP clients must use an OAuth access token, not an API key.';
  if (credential.resource !== resource) return `The access token was not issued for ${resource} (request it with resource=${resource}).`;
  return null;
}

/** The tools a JSON-RPC body calls (one message or a batch). */
function calledTools(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) => {
    const msg = m as { method?: unknown; params?: { name?: unknown } } | null;
    return msg && msg.method === 'tools/call' && typeof msg.params?.name === 'string' ? [msg.params.name] : [];
  });
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'www-authenticate, mcp-session-id, mcp-protocol-version, x-request-id',
} as const;

/**
 * The MCP endpoint: Streamable HTTP at /mcp in stateless mode (a server and a transport per POST),
 * behind OAuth access tokens issued for this resource only, and its RFC 9728 metadata.
 */
async function mcpEndpoint(app: FastifyInstance) {
  const registry = new ToolRegistry(MCP_TOOLS, GRANT_TOOLS);
  const base = () => app.config.PUBLIC_BASE_URL;

  const metadata = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .header('cache-control', 'public, max-age=300')
      .headers(CORS)
      .send({
        resource: mcpResource(base()),
        authorization_servers: [base()],
        scopes_supported: registry.scopes,
        bearer_methods_supported: ['header'],
        resource_name: 'Outreach Integration Service (MCP)',
      });
  // The MCP server is the only resource here with RFC 9728 metadata: the root path answers the same document.
  // A browser client's fetch of it carries MCP-Protocol-Version, so it is preflighted (as the authorization server's metadata is).
  for (const url of [...wellKnownPaths(base(), 'oauth-protected-resource', '/mcp'), '/.well-known/oauth-protected-resource']) {
    app.get(url, metadata);
    app.options(url, async (_request, reply) =>
      reply
        .status(204)
        .headers(CORS)
        .header('access-control-allow-methods', 'GET, OPTIONS')
        .header('access-control-allow-headers', 'mcp-protocol-version')
        .header('access-control-max-age', '600')
        .send(),
    );
  }

  // A body that is not JSON is a JSON-RPC parse error, as the SDK answers an empty one, a body that is
  // not JSON at all is 415 and one too big 413 as the SDK answers them; every other error keeps the service's envelope (the parent handler).
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const rpcError = (status: number, code: number, message: string) => reply.status(status).headers(CORS).send(jsonRpcError(code, message));
    if (error.code === INVALID_UTF8_BODY) return rpcError(400, ErrorCode.ParseError, 'Parse error: the body is not valid UTF-8.');
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return rpcError(400, ErrorCode.ParseError, 'Parse error: the body is not valid JSON (or holds a "__proto__" key or a "constructor" with a "prototype").');
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return rpcError(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    // As the SDK's transport answers a body over its own limit.
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return rpcError(413, -32000, `Payload Too Large: the body exceeds the limit of ${request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit} bytes.`);
    throw error;
  });

  const challenge = (reply: FastifyReply, status: 400 | 401 | 403, header: string, code: string, message: string) =>
    reply.status(status).headers(CORS).header('www-authenticate', header).header('cache-control', 'no-store').send(errorBody(code, message));

  /** A browser page of another site (a DNS-rebinding attack's too) is refused before anything else. */
  async function checkOrigin(request: FastifyRequest, reply: FastifyReply) {
    if (originAllowed(request.headers.origin, base(), app.config.MCP_ALLOWED_ORIGINS)) return;
    return reply
      .status(403)
      .headers(CORS)
      .send(jsonRpcError(-32000, `Forbidden: origin ${request.headers.origin} may not call this server (MCP_ALLOWED_ORIGINS).`));
  }

  /** 401 before the body is read: a client without a good token learns where to get one. */
  async function authenticateMcp(request: FastifyRequest, reply: FastifyReply) {
    const authorization = authorizationHeader(request.raw);
    if (authorization === null) {
      return challenge(reply, 400, bearerChallenge(base(), { scope: registry.scopes, error: 'invalid_request', description: SEVERAL_AUTHORIZATIONS }), 'VALIDATION_ERROR', SEVERAL_AUTHORIZATIONS);
    }
    const credential = await resolveCredential(app.credentialResolvers, authorization);
    const why = refusal(credential, mcpResource(base()));
    if (why) {
      // An error code only for a bearer token presented (RFC 6750 §3.1: none for a missing one or another scheme).
      const presented = bearerToken(authorization) !== null;
      const header = bearerChallenge(base(), { scope: registry.scopes, ...(presented ? { error: 'invalid_token', description: why } : {}) });
      return challenge(reply, 401, header, 'UNAUTHORIZED', why);
    }
    request.credential = credential;
  }

  app.options('/mcp', { onRequest: checkOrigin }, async (_request, reply) =>
    reply
      .status(204)
      .headers(CORS)
      .header('access-control-allow-methods', 'POST, OPTIONS')
      .header('access-control-allow-headers', 'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id')
      .header('access-control-max-age', '600')
      .send(),
  );

  app.post('/mcp', { onRequest: [checkOrigin, authenticateMcp] }, async function mcpRequest(request, reply) {
    const credential = request.credential!;
    // MCP authorization (2025-11-25) step-up: a call needing a scope the token lacks is an HTTP 403 naming it.
    const missing = [...new Set(calledTools(request.body).flatMap((name) => {
      const tool = registry.get(name);
      return tool?.scope && !credential.scopes.has(tool.scope) ? [tool.scope] : [];
    }))];
    if (missing.length > 0) {
      const wanted = [...new Set([...registry.scopes.filter((s) => credential.scopes.has(s)), ...missing])];
      const message = `This call needs scope ${missing.join(' ')}.`;
      return challenge(reply, 403, bearerChallenge(base(), { scope: wanted, error: 'insufficient_scope', description: message }), 'INSUFFICIENT_SCOPE', message);
    }

    const version = request.headers['mcp-protocol-version'];
    // A body of another type (text) is the SDK's 415.
    const json = /^application\/json\b/i.test(request.headers['content-type'] ?? '');
    const batch = refusedBatch(request.body, typeof version === 'string' ? version : undefined) ?? (json ? invalidRequest(request.body) : null);
    if (batch) return reply.status(400).headers(CORS).send(batch);
    const refused = invalidParams(request.body);
    if (refused) return reply.headers(CORS).send(refused);

    reply.hijack();
    for (const [name, value] of Object.entries(CORS)) reply.raw.setHeader(name, value);
    reply.raw.setHeader('x-request-id', request.id); // the hijacked answer leaves fastify's headers behind
    const server = mcpServerFor(app, credential, registry, request.id);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !prefersEventStream(request.headers.accept) });
    reply.raw.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify(jsonRpcError(ErrorCode.InternalError, 'Internal server error')));
      }
    }
  });

  // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE), as the SDK's stateless examples answer;
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .status(405)
      .headers(CORS)
      .header('allow', 'POST, OPTIONS')
      .send(jsonRpcError(-32000, 'Method not allowed.'));
  // Every other method too (PUT and PATCH were the REST envelope's 404), naming what is allowed,
  // before any body is read (a body that would be refused is no reason to hide the method's answer).
  app.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH'], url: '/mcp', onRequest: [checkOrigin, notAllowed], handler: notAllowed });
}

export const mcp = fp(mcpEndpoint, { name: 'mcp', dependencies: ['services', 'authenticate', 'read-your-writes'], encapsulate: true });
