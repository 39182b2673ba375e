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
