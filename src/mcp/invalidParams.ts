import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, PingRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type JsonRpcErrorResponse, jsonRpcError } from './jsonRpcError.ts';

/** The SDK's schema of each request the server answers (tools/call's `arguments` an object: the tool checks what it holds). */
const REQUESTS: Record<string, { safeParse(value: unknown): { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } } }> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
};

/**
 * The JSON-RPC error for one request whose params do not fit its method: -32602 Invalid params with
 * a short message. (The SDK parses a request with its handler's schema and reports a failure as
 * -32603 Internal error, or for tools/call -32602, carrying zod's whole dump.) Null for anything else: a batch, a
 * notification, an unknown method, or params that fit.
 */
export function invalidParams(body: unknown): JsonRpcErrorResponse | null {
  const message = body as { jsonrpc?: unknown; id?: unknown; method?: unknown } | null;
  if (!message || typeof message !== 'object' || Array.isArray(message) || message.jsonrpc !== '2.0') return null;
  const { id, method } = message;
  if ((typeof id !== 'string' && typeof id !== 'number') || typeof method !== 'string' || !Object.hasOwn(REQUESTS, method)) return null;
  const parsed = REQUESTS[method]!.safeParse(body);
  if (parsed.success) return null;
  const details = (parsed.error?.issues ?? []).map((i) => `${i.path.map(String).join('.') || 'request'}: ${i.message}`).join('; ');
  return jsonRpcError(ErrorCode.InvalidParams, `Invalid params for ${method}: ${details}`, id);
}
