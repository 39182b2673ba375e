import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { type JsonRpcErrorResponse, jsonRpcError } from './jsonRpcError.ts';

/** The first protocol version without JSON-RPC batches. */
const WITHOUT_BATCHES = '2025-06-18';

/**
 * The JSON-RPC error for a batch this endpoint does not take, null otherwise: an empty one (JSON-RPC
 * 2.0 §6: one Invalid Request error), and any batch under a protocol version that removed them
 * (2025-06-18). Versions before it (the header absent means 2025-03-26) must receive batches, which
 * the SDK's transport answers (a message in such a batch whose params do not fit gets the SDK's own
 * -32602/-32603 with zod's dump: only single messages are checked by invalidParams).
 */
export function refusedBatch(body: unknown, protocolVersion: string | undefined): JsonRpcErrorResponse | null {
  if (!Array.isArray(body)) return null;
  const invalid = (message: string) => jsonRpcError(ErrorCode.InvalidRequest, `Invalid Request: ${message}`);
  if (body.length === 0) return invalid('the batch is empty.');
  // A version that is not a date is left to the SDK, which refuses it (400).
  if (protocolVersion !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(protocolVersion) && protocolVersion >= WITHOUT_BATCHES) {
    return invalid(`JSON-RPC batches are not part of MCP ${protocolVersion}; send one message per request.`);
  }
  return null;
}

/** MCP's ids: a string or an integer (JSON-RPC allows fractions; MCP does not). */
const isId = (id: unknown) => typeof id === 'string' || Number.isSafeInteger(id);

/** A JSON-RPC 2.0 message a client may send: a request or notification (`method`), or its answer to a server request (`result` or `error`). */
function isMessage(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return false;
  if ('method' in m) return typeof m.method === 'string' && (!('id' in m) || isId(m.id));
  return ('result' in m || 'error' in m) && 'id' in m && (isId(m.id) || m.id === null);
}

/**
 * -32600 Invalid Request for JSON that is no JSON-RPC message, or a batch holding one (the SDK
 * answered both with -32700 Parse error, which JSON-RPC 2.0 §5.1 keeps for JSON that does not
 * parse), for a batch holding `initialize` (MCP 2025-03-26: it must not be part of a batch), and
 * for a batch in which two requests share an id (their answers could not be told apart).
 * A batch is refused whole: the SDK's transport cannot answer part of one.
 */
export function invalidRequest(body: unknown): JsonRpcErrorResponse | null {
  const invalid = (message: string) => jsonRpcError(ErrorCode.InvalidRequest, `Invalid Request: ${message}`);
  // No body (an empty one is read as none) is the SDK's parse error.
  if (body === undefined || body === null) return null;
  if (!Array.isArray(body)) return isMessage(body) ? null : invalid('the body is not a JSON-RPC 2.0 message (an object with "jsonrpc": "2.0", a string "method" and a string or integer "id").');
  const bad = body.findIndex((m) => !isMessage(m));
  if (bad >= 0) return invalid(`batch member ${bad} is not a JSON-RPC 2.0 message.`);
  if (body.some((m) => (m as { method?: unknown }).method === 'initialize')) return invalid('initialize must not be part of a batch.');
  // Answers are told apart by id only: the SDK's transport answered one of two requests sharing one.
  const seen = new Set<string | number>();
  for (const m of body as Array<{ method?: unknown; id?: string | number }>) {
    if (!('method' in m) || !('id' in m) || m.id === undefined) continue;
    if (seen.has(m.id)) return invalid(`two requests of the batch have the id ${JSON.stringify(m.id)}; each needs its own.`);
    seen.add(m.id);
  }
  return null;
}
