import type { BlockList } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { BlockedDestinationError, safeConnector } from '../../adapters/http/safeConnector.ts';
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
  send(url: string, body: Buffer, headers: Record<string, string>): Promise<AttemptOutcome> {
    const destination = splitUrl(url);
    if (typeof destination === 'string') return Promise.resolve({ status: 'blocked_destination', statusCode: null, error: destination, durationMs: 0 });
    return new Promise((resolve) => new Attempt(this.agent, destination, body, headers, this.timeoutMs, resolve));
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Closes every connection now; requests in flight fail. */
  async destroy(): Promise<void> {
    await this.agent.destroy();
  }
}

interface Destination {
  origin: string;
  path: string;
}

/** Where undici sends a subscription's URL (origin and path), or why it cannot be sent to. */
function splitUrl(url: string): Destination | string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'invalid url';
  }
  if (parsed.protocol !== 'https:') return 'only https destinations are allowed';
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

/** How much of an answer's body is read (and dropped) so its connection can be reused. */
const DRAIN_LIMIT = 64 * 1024;

/**
 * One POST through undici's dispatcher, without a response stream or an AbortSignal (both cost more
 * than the rest of the client per attempt). One timer bounds the whole attempt from here: DNS,
 * connecting, waiting for a pooled connection, TLS, sending and the status line; once the status is
 * in, the same timer, restarted, bounds draining the body, so a receiver trickling it cannot hold the
 * socket. undici hands over a request's controller only when it gets a connection, so an attempt that
 * timed out while queued is aborted the moment it would start.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  private ended = false;
  private drained = 0;

  constructor(
    agent: Agent,
    destination: Destination,
    body: Buffer,
    headers: Record<string, string>,
    timeoutMs: number,
    private readonly resolve: (outcome: AttemptOutcome) => void,
  ) {
    this.timer = setTimeout(() => this.onTimeout(), timeoutMs);
    agent.dispatch({ origin: destination.origin, path: destination.path, method: 'POST', body, headers }, this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(new TimeoutSignal());
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number): void {
    if (statusCode < 200) return;
    if (this.settled) return controller.abort(new TimeoutSignal());
    const status = statusCode < 300 ? 'ok' : (`http_${statusCode}` as const);
    this.settle({ status, statusCode, error: null, durationMs: this.elapsed() });
    this.timer.refresh();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.drained += chunk.length;
    if (this.drained > DRAIN_LIMIT) controller.abort(new Error('answer body over the drain limit'));
  }

  onResponseEnd(): void {
    this.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.end();
    if (!this.settled) this.settle({ ...classify(error), statusCode: null, durationMs: this.elapsed() });
  }

  private onTimeout(): void {
    if (this.ended) return;
    if (!this.settled) this.settle({ status: 'timeout', statusCode: null, error: 'no response within the timeout', durationMs: this.elapsed() });
    this.controller?.abort(new TimeoutSignal());
  }

  private end(): void {
    this.ended = true;
    clearTimeout(this.timer);
  }

  private settle(outcome: AttemptOutcome): void {
    this.settled = true;
    this.resolve(outcome);
  }

  private elapsed(): number {
    return Math.round(performance.now() - this.started);
  }
}

class TimeoutSignal extends Error {
  override readonly name = 'TimeoutSignal';
}

function classify(error: unknown): { status: DeliveryStatus; error: string } {
  const chain: any[] = [];
  for (let e: any = error; e && chain.length < 5; e = e.cause) chain.push(e);
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
