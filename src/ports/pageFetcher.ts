/** The agents' page fetcher: one GET of an https page, no redirect followed, bounded in time and size. */
export interface FetchedPage {
  url: string;
  status: number;
  /** Response headers, names in lower case (repeated headers joined with `, `). */
  headers: Record<string, string>;
  /** The body as text, cut at `maxBytes`. */
  body: string;
  truncated: boolean;
  /** From the request's start to the end of the (capped) body. */
  durationMs: number;
  /** The Location of a 3xx answer, resolved against the URL; null otherwise. Never followed. */
  location: string | null;
}

export type PageFetchFailure = 'invalid_url' | 'blocked' | 'timeout' | 'unreachable';

/** The longest a page fetch may be given (an agent's `timeoutMs` setting at most). */
export const MAX_PAGE_FETCH_TIMEOUT_MS = 30_000;

export class PageFetchError extends Error {
  override readonly name = 'PageFetchError';
  constructor(
    readonly reason: PageFetchFailure,
    message: string,
    readonly durationMs: number,
  ) {
    super(message);
  }
}

export interface FetchOptions {
  timeoutMs?: number;
  maxBytes?: number;
  signal?: AbortSignal;
}

export interface PageFetcher {
  /** The User-Agent it sends (robots.txt rules are matched against it). */
  readonly userAgent: string;
  /** Throws PageFetchError when no HTTP answer came. */
  fetch(url: string, options?: FetchOptions): Promise<FetchedPage>;
  close(): Promise<void>;
}
