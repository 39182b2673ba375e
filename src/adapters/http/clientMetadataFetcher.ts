import type { BlockList } from 'node:net';
import { Agent, request } from 'undici';
import { CLIENT_METADATA_MAX_BYTES, type MetadataDocumentClient, clientIdUrlProblem, parseClientMetadataDocument } from '../../domain/clientMetadataDocument.ts';
import { ClientMetadataError, type ClientMetadataSource } from '../../ports/clientMetadata.ts';
import { BlockedDestinationError, safeConnector } from './safeConnector.ts';
import { discardBody } from './discardBody.ts';

export interface ClientMetadataFetcherOptions {
  /** Operator-allowed ranges (OAUTH_CLIENT_METADATA_ALLOWED_RANGES); everything else private is refused. */
  allowed: BlockList;
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. */
  extraCa?: string;
  timeoutMs: number;
  /** Cache bounds in seconds: Cache-Control max-age is clamped to them; without one, `defaultTtlSeconds`. */
  minTtlSeconds?: number;
  maxTtlSeconds?: number;
  defaultTtlSeconds?: number;
  maxEntries?: number;
  now?: () => number;
}

/**
 * Client ID Metadata Documents over the webhooks' SSRF-safe connector (`safeConnector.ts`): every
 * address DNS returns and the connected socket's address are checked against the refused ranges
 * (loopback, private, link-local, …), redirects are not followed, the body is capped, and only
 * `200 application/json` is read. Good documents are cached for their Cache-Control max-age
 * within bounds; concurrent loads of one URL share one fetch.
 */
export class ClientMetadataFetcher implements ClientMetadataSource {
  private readonly agent: Agent;
  private readonly cache = new Map<string, { client: MetadataDocumentClient; expiresAt: number }>();
  private readonly inFlight = new Map<string, Promise<MetadataDocumentClient>>();
  private readonly now: () => number;

  constructor(private readonly options: ClientMetadataFetcherOptions) {
    this.now = options.now ?? Date.now;
    const connect = safeConnector({ allowed: options.allowed, extraCa: options.extraCa, timeoutMs: options.timeoutMs });
    this.agent = new Agent({ connect, connections: 4, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs });
  }

  async load(clientId: string): Promise<MetadataDocumentClient> {
    const cached = this.cache.get(clientId);
    if (cached && cached.expiresAt > this.now()) return cached.client;
    const pending = this.inFlight.get(clientId);
    if (pending) return pending;
    const fetching = this.fetchDocument(clientId).finally(() => this.inFlight.delete(clientId));
    this.inFlight.set(clientId, fetching);
    return fetching;
  }

  private async fetchDocument(clientId: string): Promise<MetadataDocumentClient> {
    const urlProblem = clientIdUrlProblem(clientId);
    if (urlProblem) throw new ClientMetadataError(urlProblem);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
    const unreachable = (error: unknown) =>
      new ClientMetadataError(`the client metadata document could not be fetched: ${describe(error, controller.signal)}`, { unreachable: true });
    try {
      const res = await request(clientId, {
        dispatcher: this.agent,
        method: 'GET',
        headers: { accept: 'application/json' },
        signal: controller.signal,
      }).catch((error: unknown) => {
        throw unreachable(error);
      });
      // A refused answer's body is not read: a peer trickling it would hold the socket long after the timeout.
      if (res.statusCode !== 200) {
        discardBody(res.body);
        throw new ClientMetadataError(`fetching the client metadata document answered HTTP ${res.statusCode} (redirects are not followed)`);
      }
      const type = String(res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json' && !type.endsWith('+json')) {
        discardBody(res.body);
        throw new ClientMetadataError('the client metadata document is not application/json');
      }
      // A body that does not arrive within the timeout (a peer trickling it) is no answer either.
      const text = await readCapped(res.body, CLIENT_METADATA_MAX_BYTES).catch((error: unknown) => {
        throw error instanceof ClientMetadataError ? error : unreachable(error);
      });
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new ClientMetadataError('the client metadata document is not valid JSON');
      }
      const parsed = parseClientMetadataDocument(clientId, json);
      if ('problem' in parsed) throw new ClientMetadataError(parsed.problem);
      const ttl = this.ttlSeconds(String(res.headers['cache-control'] ?? ''));
      if (ttl > 0) this.remember(clientId, parsed.client, ttl);
      return parsed.client;
    } finally {
      clearTimeout(timer);
    }
  }

  private ttlSeconds(cacheControl: string): number {
    const min = this.options.minTtlSeconds ?? 60;
    const max = this.options.maxTtlSeconds ?? 86_400;
    if (/(^|,)\s*no-store\s*(,|$)/i.test(cacheControl)) return 0;
    const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl);
    const wanted = maxAge ? Number(maxAge[1]) : (this.options.defaultTtlSeconds ?? 300);
    return Math.min(max, Math.max(min, wanted));
  }

  private remember(clientId: string, client: MetadataDocumentClient, ttlSeconds: number) {
    const maxEntries = this.options.maxEntries ?? 1_000;
    this.cache.delete(clientId);
    while (this.cache.size >= maxEntries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(clientId, { client, expiresAt: this.now() + ttlSeconds * 1000 });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

async function readCapped(body: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw new ClientMetadataError(`the client metadata document is larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describe(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'no answer within the timeout';
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof ClientMetadataError || e instanceof BlockedDestinationError) return e.message;
  }
  const code = error instanceof Error ? ((error as Error & { code?: string }).code ?? error.message) : String(error);
  return code;
}
