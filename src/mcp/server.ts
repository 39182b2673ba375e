import type { FastifyInstance } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  type CallToolResult,
  CallToolRequestParamsSchema,
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type ErrorCode as ServiceErrorCode, ServiceError, insufficientScope } from '../domain/errors.ts';
import { truncateText } from '../domain/text.ts';
import { reachableSite } from '../http/authenticate.ts';
import type { Credential } from '../http/credentials.ts';
import { STORE_UNAVAILABLE, errorBody, httpErrorOf } from '../http/errorHandler.ts';
import { isStoreUnavailable } from '../ports/storeUnavailable.ts';
import { countWrite } from '../http/writeRateLimit.ts';
import { getSite } from '../readModels/sites.ts';
import { siteIdInput } from './tools/tool.ts';
import type { ToolRegistry } from './toolRegistry.ts';
import { actingForCredential } from '../http/actingFor.ts';

export const SERVER_INFO = { name: 'outreach-integration-service', version: '1.0.0' } as const;

const INSTRUCTIONS =
  'Tools of the Outreach Integration Service. Every tool but list_sites takes the siteId of one of the sites you were granted ' +
  '(list_sites names them, with their domains); ' +
  'errors come back as tool errors whose text is {"error":{"code","message"}} with the REST API\'s codes.';

/**
 * The answer as JSON text: the REST route's body, once. (No structuredContent: the tools declare no
 * outputSchema, and carrying the page twice doubled what both ends serialise and parse.)
 */
function success(body: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** `retryAfterSeconds`: what REST sends as Retry-After (a tool result has no headers), in the error object. */
function failure(code: string, message: string, retryAfterSeconds: number | null = null): CallToolResult {
  const body = errorBody(code, message);
  const error = retryAfterSeconds === null ? body : { error: { ...body.error, retryAfterSeconds } };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(error) }] };
}

/** One for the process: the SDK builds an Ajv instance per server otherwise, which dominated a stateless request's cost. */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

const codeOf = (error: ServiceError): string => httpErrorOf(error).code;

const validationDetails = (error: z.ZodError, under: PropertyKey[] = []) =>
  error.issues
    .map((i) => {
      const path = [...under, ...i.path];
      return `${path.length ? path.join('.') : 'arguments'}: ${i.message}`;
    })
    .join('; ');

/**
 * tools/call as the handler is registered: any `arguments`. The SDK parses a request with the
 * handler's schema first and reports a failure there as -32603 Internal error with zod's dump; with
 * this one its own check of the real schema runs instead and answers -32602 Invalid params (still
 * with the dump: a single message is checked before, by invalidParams, with a short message).
 */
export const CallToolRequestAnyArguments = CallToolRequestSchema.extend({ params: CallToolRequestParamsSchema.extend({ arguments: z.unknown().optional() }) });

/**
 * The SDK's low-level `Server` rather than `McpServer` (which wraps it): McpServer validates tool
 * arguments itself and reports a failure as bare text without the REST code (VALIDATION_ERROR),
 * and converts every tool's zod schema to JSON Schema on each tools/list, which a stateless server
 * built per request would repeat on every call. Here the registry converts once at start.
 *
 * One MCP server for one request (stateless mode), acting for `credential`: tools/list from the
 * registry, tools/call with the scope, the site, the write tier (write tools), the tool's gate and
 * the input checked, in that order. A refusal or failure is a tool error (isError) carrying the REST code, never a crash.
 */
export function mcpServerFor(app: FastifyInstance, credential: Credential, registry: ToolRegistry, requestId?: string): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: registry.listing }));
  server.setRequestHandler(CallToolRequestAnyArguments, async (request): Promise<CallToolResult> => {
    const tool = registry.get(request.params.name);
    // McpError's message gets its "MCP error -32602: " prefix on the wire too: a plain Error's does not.
    if (!tool) throw Object.assign(new Error(`Unknown tool: ${truncateText(request.params.name, 100)}`), { code: ErrorCode.InvalidParams });
    try {
      if (!tool.siteBound) {
        const parsed = tool.input.safeParse(request.params.arguments ?? {});
        if (!parsed.success) return failure('VALIDATION_ERROR', validationDetails(parsed.error));
        return success(await tool.run({ app, credential }));
      }
      if (!credential.scopes.has(tool.scope)) throw insufficientScope(tool.scope);
      // As REST: the site (from the path, in authentication there), the write tier (before the route),
      // then the route's own gate, then the body. A call on a site the grant does not reach uses none of
      // the team's writes.
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      const siteId = siteIdInput.safeParse(args['siteId']);
      if (!siteId.success) return failure('VALIDATION_ERROR', validationDetails(siteId.error, ['siteId']));
      const site = reachableSite(credential, await getSite(app.readModels, siteId.data), { licence: true });
      if (tool.write) await countWrite(app, credential.teamId, app.config.WRITE_RATE_LIMIT_PER_MINUTE);
      tool.gate?.(args, site);
      const parsed = tool.input.safeParse(args);
      if (!parsed.success) return failure('VALIDATION_ERROR', validationDetails(parsed.error));
      // The tool's commands record the token as their actor.
      return success(await tool.run(parsed.data, { app: actingForCredential(app, credential, requestId), credential, site }));
    } catch (error) {
      if (error instanceof ServiceError) return failure(codeOf(error), error.message, error.retryAfterSeconds);
      if (isStoreUnavailable(error)) {
        app.log.warn({ err: error, tool: tool.name }, 'a store is unavailable');
        return failure('SERVICE_UNAVAILABLE' satisfies ServiceErrorCode, STORE_UNAVAILABLE, 1);
      }
      app.log.error({ err: error, tool: tool.name }, 'MCP tool failed');
      return failure('INTERNAL_ERROR' satisfies ServiceErrorCode, 'The tool failed; the failure is logged.');
    }
  });
  return server;
}
