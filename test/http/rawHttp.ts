import { connect, type Socket } from 'node:net';

export interface RawResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** Host and port of a `http://127.0.0.1:<port>` base URL. */
export function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

/** Opens a TCP connection to the service; resolves once connected. */
export function openSocket(url: string): Promise<Socket> {
  const { host, port } = hostPort(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Parses one HTTP/1.1 response (with Content-Length) out of raw bytes read as latin1; null while incomplete. */
export function parseResponse(raw: string): RawResponse | null {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = raw.slice(end + 4);
  if (body.length < length) return null;
  return { statusCode: Number(statusLine!.split(' ')[1]), headers, body: Buffer.from(body.slice(0, length), 'latin1').toString('utf8') };
}

/**
 * Writes `request` as raw bytes and reads the first response, for what `fetch` and `inject` cannot
 * send (oversized header blocks, partial bodies). Rejects when the socket closes without one.
 */
export async function rawRequest(url: string, request: string | Buffer, timeoutMs = 5_000): Promise<RawResponse> {
  const socket = await openSocket(url);
  return new Promise((resolve, reject) => {
    let raw = '';
    const timer = setTimeout(() => finish(new Error(`no response within ${timeoutMs} ms`)), timeoutMs);
    const finish = (error: Error | null, res?: RawResponse) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(res!);
    };
    socket.on('data', (chunk) => {
      raw += chunk.toString('latin1');
      const res = parseResponse(raw);
      if (res) finish(null, res);
    });
    socket.on('error', () => {});
    socket.on('close', () => finish(new Error(`socket closed without a complete response: ${JSON.stringify(raw.slice(0, 200))}`)));
    socket.write(request);
  });
}
