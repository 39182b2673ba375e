import type { BlockList } from 'node:net';
import { Agent, request } from 'undici';
import { BlockedDestinationError, safeConnector } from '../../adapters/http/safeConnector.ts';
import { discardBody } from '../../adapters/http/discardBody.ts';
import type { AttemptOutcome, DeliveryStatus } from '../../domain/webhookDelivery.ts';

export { BlockedDestinationError };

export interface SenderOptions {
  /** Operator-allowed ranges (WEBHOOK_ALLOWED_RANGES). */
  allowed: BlockList;
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. */
  extraCa?: string;
  /** An attempt without a status line this many ms after it started (connection wait included) has failed. */
  timeoutMs: number;
  /** Keep-alive connections per origin. */
  connectionsPerOrigin: number;
}

/**
 * One pooled, keep-alive HTTPS client for every delivery. The destination check runs twice on
 * every new connection: in `lookup` on every address DNS returns, and on the socket's actual
 * remote address once connected, so neither DNS rebinding nor a literal address can slip through.
 * Redirects are never followed (undici's `request` does not follow them).
 */
export class WebhookSender {
  readonly agent: Agent;
  private readonly timeoutMs: number;

  constructor(private readonly options: SenderOptions) {
    this.timeoutMs = options.timeoutMs;
    const connect = safeConnector({ allowed: options.allowed, extraCa: options.extraCa, timeoutMs: options.timeoutMs });
    this.agent = new Agent({
      connect,
      connections: options.connectionsPerOrigin,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  /** One attempt: POST exactly `body`; only the status code is inspected. */
  async send(url: string, body: Buffer, headers: Record<string, string>): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { status: 'blocked_destination', statusCode: null, error: 'invalid url', durationMs: 0 };
    }
    if (parsed.protocol !== 'https:') return { status: 'blocked_destination', statusCode: null, error: 'only https destinations are allowed', durationMs: 0 };
    // The bound covers the whole attempt from here: DNS, connecting, waiting for a pooled connection,
    // TLS, sending and the status line. undici leaves an aborted request queued for a connection until
    // one frees up, so the attempt does not wait for undici to notice: it ends when the signal fires.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new TimeoutSignal()), this.timeoutMs);
    const deadline = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }));
    const pending = request(parsed, {
      dispatcher: this.agent,
      method: 'POST',
      body,
      headers,
      signal: controller.signal,
    });
    try {
      const res = await Promise.race([pending, deadline]);
      const durationMs = elapsed();
      clearTimeout(timer);
      // Drain a little of the answer so the connection can be reused (its content is not inspected),
      // within the attempt's bound again: a receiver trickling its body must not hold the socket.
      res.body.dump({ limit: 64 * 1024, signal: AbortSignal.timeout(this.timeoutMs) }).catch(() => {});
      const code = res.statusCode;
      if (code >= 200 && code < 300) return { status: 'ok', statusCode: code, error: null, durationMs };
      return { status: `http_${code}`, statusCode: code, error: null, durationMs };
    } catch (error) {
      clearTimeout(timer);
      // Settles later (aborted) when the deadline won; an answer arriving in the same tick is dropped.
      pending.then((res) => discardBody(res.body), () => {});
      return { ...classify(error, controller.signal), statusCode: null, durationMs: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Closes every connection now; requests in flight fail. */
  async destroy(): Promise<void> {
    await this.agent.destroy();
  }
}

class TimeoutSignal extends Error {
  override readonly name = 'TimeoutSignal';
}

function classify(error: unknown, signal: AbortSignal): { status: DeliveryStatus; error: string } {
  const chain: any[] = [];
  for (let e: any = error; e && chain.length < 5; e = e.cause) chain.push(e);
  if (signal.aborted && signal.reason instanceof TimeoutSignal) return { status: 'timeout', error: 'no response within the timeout' };
  for (const e of chain) {
    if (e instanceof BlockedDestinationError || e?.code === 'BLOCKED_DESTINATION') return { status: 'blocked_destination', error: String(e.message) };
  }
  for (const e of chain) {
    const code = String(e?.code ?? '');
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') return { status: 'timeout', error: 'no response within the timeout' };
    if (/^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_|ERR_OSSL)/.test(code) || /certificate|handshake/i.test(String(e?.message)))
      return { status: 'tls_error', error: code || 'tls handshake failed' };
  }
  const first = chain[0];
  return { status: 'network_error', error: String(first?.code ?? first?.name ?? 'network error') };
}
