import t from 'tap';
import { PageFetchError } from '../../src/ports/pageFetcher.ts';

const timedOut = (error: unknown) => error instanceof PageFetchError && error.reason === 'timeout';
import { html, loopbackFetcher, startSite } from './sites.ts';

/**
 * A fetch's own timeout, up to the fetcher's most: the connection's timeouts were fixed at the
 * fetcher's default (10 s), so a site_performance `timeoutMs` of 30 s still cut a slow page at 10 s
 * (from an audit of the agents).
 */
t.test("a caller's longer timeout holds up to the fetcher's most; a shorter one still cuts", async (t) => {
  const site = await startSite({ '/slow': { body: html('Slow'), delayMs: 700 } });
  t.teardown(() => site.close());
  const fetcher = await loopbackFetcher({ timeoutMs: 300, maxTimeoutMs: 2_000 });
  t.teardown(() => fetcher.close());
  const page = await fetcher.fetch(`${site.origin}/slow`, { timeoutMs: 1_500 });
  t.equal(page.status, 200, 'answered after 700 ms within the 1.5 s asked for (the default is 300 ms)');
  t.ok(await fetcher.fetch(`${site.origin}/slow`).then(() => false, timedOut), 'the default still applies when none is asked');
  const capped = await loopbackFetcher({ timeoutMs: 300, maxTimeoutMs: 500 });
  t.teardown(() => capped.close());
  t.ok(await capped.fetch(`${site.origin}/slow`, { timeoutMs: 5_000 }).then(() => false, timedOut), 'never past the most');
});
