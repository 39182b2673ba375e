import type { PageProblem } from '../domain/agentWork.ts';
import { type PageCheck, judgePage } from '../domain/agentWork/sitePerformance.ts';
import { mapLimit } from '../lib/mapLimit.ts';
import { PageFetchError } from '../ports/pageFetcher.ts';
import { workSettingsOf } from './settings.ts';
import type { AgentWork } from './types.ts';

/** Body bytes read per page: enough for the <head> and its <title>. */
const MAX_PAGE_BYTES = 256 * 1024;

/** Site Performance Agent: fetches each article URL and reports broken, unreachable, slow, redirected and untitled pages. */
export const sitePerformanceWork: AgentWork = async (run, deps) => {
  const settings = workSettingsOf('site_performance', run.settings);
  const articles = await deps.articles(run.siteId);
  const urls = [...new Set(articles.map((a) => a.url))].slice(0, settings.maxPages);
  const checks = await mapLimit(urls, settings.concurrency, async (url): Promise<PageCheck | null> => {
    if (deps.signal.aborted) return null;
    try {
      const page = await deps.fetcher.fetch(url, { timeoutMs: settings.timeoutMs, maxBytes: MAX_PAGE_BYTES, signal: deps.signal });
      return { url, status: page.status, durationMs: page.durationMs, location: page.location, contentType: page.headers['content-type'] ?? null, body: page.body, error: null };
    } catch (error) {
      // Cut short by the run's end (a stop, AGENT_RUN_MAX_MS): not checked, rather than reported unreachable.
      if (deps.signal.aborted) return null;
      const message = error instanceof PageFetchError ? error.message : error instanceof Error ? error.message : String(error);
      return { url, status: null, durationMs: null, location: null, contentType: null, body: null, error: message };
    }
  });
  const proposals = checks.flatMap((c) => (c ? [judgePage(c, { slowMs: settings.slowMs })] : [])).filter((p) => p !== null);
  const count = (problem: PageProblem) => proposals.filter((p) => p.problems.includes(problem)).length;
  return {
    proposals,
    counts: {
      pagesChecked: checks.filter((c) => c !== null).length,
      broken: count('broken'),
      unreachable: count('unreachable'),
      slow: count('slow'),
      redirected: count('redirected'),
      untitled: count('untitled'),
    },
    creditsUsed: 0,
  };
};
