import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { SafePageFetcher } from '../../src/adapters/http/safePageFetcher.ts';
import { parseAllowedRanges } from '../../src/domain/destination.ts';
import { testCertificate } from '../webhooks/helpers.ts';

export interface Page {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
}

export interface TestSite {
  /** `https://127.0.0.1:<port>` (no trailing slash). */
  origin: string;
  /** Paths requested, in order, with the User-Agent each came with. */
  requests: { path: string; userAgent: string }[];
  close(): Promise<void>;
}

/** A real HTTPS site on loopback (the webhooks' test certificate) answering fixed pages; anything else is 404. */
export async function startSite(pages: Record<string, Page>): Promise<TestSite> {
  const { cert, key } = await testCertificate();
  const requests: TestSite['requests'] = [];
  const server = createServer({ cert, key }, (req, res) => {
    const path = req.url ?? '/';
    requests.push({ path, userAgent: String(req.headers['user-agent'] ?? '') });
    const page = pages[path] ?? { status: 404, body: '<html><head><title>Not found</title></head></html>' };
    const answer = () => {
      res.writeHead(page.status ?? 200, { 'content-type': 'text/html; charset=utf-8', ...page.headers });
      res.end(page.body ?? '');
    };
    if (page.delayMs) setTimeout(answer, page.delayMs);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A fetcher that trusts the test certificate and allows loopback (as WEBHOOK_ALLOWED_RANGES=127.0.0.0/8 would). */
export async function loopbackFetcher(options: { timeoutMs?: number; maxTimeoutMs?: number; maxBytes?: number } = {}): Promise<SafePageFetcher> {
  const { caFile } = await testCertificate();
  return new SafePageFetcher({
    allowed: parseAllowedRanges('127.0.0.0/8'),
    extraCa: readFileSync(caFile, 'utf8'),
    timeoutMs: options.timeoutMs ?? 5000,
    maxTimeoutMs: options.maxTimeoutMs,
    maxBytes: options.maxBytes ?? 100_000,
  });
}

export const html = (title: string | null, body = '<p>Hello</p>') => `<!doctype html><html><head>${title === null ? '' : `<title>${title}</title>`}</head><body>${body}</body></html>`;
