import { readFileSync } from 'node:fs';
import type { BlockList } from 'node:net';
import { Agent, request } from 'undici';
import type { Config } from '../../config.ts';
import { parseAllowedRanges } from '../../domain/destination.ts';
import { type FetchOptions, type FetchedPage, MAX_PAGE_FETCH_TIMEOUT_MS, PageFetchError, type PageFetcher } from '../../ports/pageFetcher.ts';
import { BlockedDestinationError, safeConnector } from './safeConnector.ts';
import { discardBody } from './discardBody.ts';

export const PAGE_FETCHER_USER_AGENT = 'OutreachServiceBot/1.0';

export interface SafePageFetcherOptions {
  allowed: BlockList;
  extraCa?: string;
  /** A fetch's time when its caller gives none. */
  timeoutMs: number;
  /**
   * The longest a caller may give (the connection's own timeouts; the fetch's timer enforces a shorter
   * one): fixed at `timeoutMs`, a site_performance `timeoutMs` of 30 s was cut at 10 s. Default `timeoutMs`.
   */
  maxTimeoutMs?: number;
  maxBytes: number;
  userAgent?: string;
}

/**
 * The page fetcher over the webhooks' SSRF-safe connector: https only, no private, loopback or
 * link-local address unless the operator allowed its range, checked on DNS and on the socket.
 */
export class SafePageFetcher implements PageFetcher {
  readonly userAgent: string;
  private readonly agent: Agent;
  private readonly maxTimeoutMs: number;

  constructor(private readonly options: SafePageFetcherOptions) {
    this.userAgent = options.userAgent ?? PAGE_FETCHER_USER_AGENT;
    this.maxTimeoutMs = options.maxTimeoutMs ?? options.timeoutMs;
    this.agent = new Agent({
      connect: safeConnector({ allowed: options.allowed, extraCa: options.extraCa, timeoutMs: this.maxTimeoutMs }),
      connections: 4,
      keepAliveTimeout: 10_000,
      headersTimeout: this.maxTimeoutMs,
      bodyTimeout: this.maxTimeoutMs,
    });
  }

  async fetch(url: string, options: FetchOptions = {}): Promise<FetchedPage> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new PageFetchError('invalid_url', `not a URL: ${url.slice(0, 200)}`, 0);
    }
    if (parsed.protocol !== 'https:') throw new PageFetchError('blocked', 'only https pages are fetched', 0);
    const timeoutMs = Math.min(options.timeoutMs ?? this.options.timeoutMs, this.maxTimeoutMs);
    const maxBytes = options.maxBytes ?? this.options.maxBytes;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error('timeout')), timeoutMs);
    const onAbort = () => controller.abort(new Error('aborted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const pending = request(parsed, {
        method: 'GET',
        dispatcher: this.agent,
        signal: controller.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        headers: { 'user-agent': this.userAgent, accept: 'text/html,text/plain;q=0.9,*/*;q=0.5' },
      });
      // undici honours the signal only once connected: a peer that accepts TCP and never finishes the
      // TLS handshake would hold the caller (a run asked to stop) until the connect timeout.
      const stopped = new Promise<never>((_, reject) => {
        if (controller.signal.aborted) reject(controller.signal.reason);
        controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
      });
      const res = await Promise.race([pending, stopped]).catch((error: unknown) => {
        pending.then((late) => discardBody(late.body), () => {});
        throw error;
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        const room = maxBytes - size;
        if (chunk.length >= room) {
          chunks.push(chunk.subarray(0, room));
          size = maxBytes;
          truncated = chunk.length > room;
          if (truncated) break;
          continue;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
      if (truncated) res.body.destroy();
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      const rawLocation = res.statusCode >= 300 && res.statusCode < 400 ? headers.location : undefined;
      let location: string | null = null;
      if (rawLocation) {
        try {
          location = new URL(rawLocation, parsed).toString();
        } catch {
          location = rawLocation;
        }
      }
      return { url, status: res.statusCode, headers, body: Buffer.concat(chunks).toString('utf8'), truncated, durationMs: elapsed(), location };
    } catch (error) {
      if (error instanceof PageFetchError) throw error;
      const e = error as { code?: string; message?: string; cause?: unknown };
      const cause = (e.cause ?? null) as { code?: string; message?: string } | null;
      if (error instanceof BlockedDestinationError || e.code === 'BLOCKED_DESTINATION' || cause?.code === 'BLOCKED_DESTINATION') {
        throw new PageFetchError('blocked', `refused: ${cause?.message ?? e.message ?? 'blocked destination'}`, elapsed());
      }
      if (options.signal?.aborted) throw new PageFetchError('timeout', 'stopped before a complete answer', elapsed());
      if (controller.signal.aborted) throw new PageFetchError('timeout', `no complete answer within ${timeoutMs} ms`, elapsed());
      throw new PageFetchError('unreachable', `${e.code ? `${e.code}: ` : ''}${e.message ?? String(error)}`.slice(0, 300), elapsed());
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    // destroy, not close: a connect a stopped fetch left pending (a TLS handshake never answered) would hold close() until its timeout.
    await this.agent.destroy();
  }
}

/** The fetcher under the webhooks' destination policy (WEBHOOK_ALLOWED_RANGES, WEBHOOK_EXTRA_CA_FILE). */
export function pageFetcherFromConfig(config: Config): SafePageFetcher {
  return new SafePageFetcher({
    allowed: parseAllowedRanges(config.WEBHOOK_ALLOWED_RANGES),
    extraCa: config.WEBHOOK_EXTRA_CA_FILE ? readFileSync(config.WEBHOOK_EXTRA_CA_FILE, 'utf8') : undefined,
    timeoutMs: 10_000,
    maxTimeoutMs: MAX_PAGE_FETCH_TIMEOUT_MS,
    maxBytes: 1_000_000,
  });
}
