/** A JSON-RPC 2.0 error response; `id` null when the request's id could not be read (or there was no single request). */
export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

export const jsonRpcError = (code: number, message: string, id: string | number | null = null): JsonRpcErrorResponse => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});
