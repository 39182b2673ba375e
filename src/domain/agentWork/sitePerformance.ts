/**
 * Site Performance Agent: what one fetch of an article's page says about it. The fetching itself
 * is in src/agentWork/sitePerformance.ts; this judges the outcome.
 */
import type { PageProblem, ProposalOf } from '../agentWork.ts';

/** One page fetch as observed: an HTTP answer, or the reason none came. */
export interface PageCheck {
  url: string;
  status: number | null;
  durationMs: number | null;
  location: string | null;
  contentType: string | null;
  body: string | null;
  /** Why no answer came (DNS, refused address, timeout); null when one did. */
  error: string | null;
}

export interface SitePerformanceThresholds {
  slowMs: number;
}

/** The text of the page's <title>, null when it has none or an empty one. */
export function pageTitle(html: string): string | null {
  const m = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  if (!m) return null;
  const text = m[1]!.replace(/<[^>]*>/g, '').replace(/\s+/g, ' ').trim();
  return text || null;
}

export function judgePage(check: PageCheck, thresholds: SitePerformanceThresholds): ProposalOf<'site_performance'> | null {
  const problems: PageProblem[] = [];
  const details: string[] = [];
  if (check.status === null) {
    problems.push('unreachable');
    details.push(`no answer: ${check.error ?? 'unknown error'}`);
  } else if (check.status >= 400) {
    problems.push('broken');
    details.push(`answers ${check.status}`);
  } else if (check.status >= 300) {
    problems.push('redirected');
    details.push(check.location ? `redirects (${check.status}) to ${check.location}` : `answers ${check.status} without a Location`);
  }
  if (check.durationMs !== null && check.status !== null && check.durationMs > thresholds.slowMs) {
    problems.push('slow');
    details.push(`took ${check.durationMs} ms (slow above ${thresholds.slowMs} ms)`);
  }
  const isHtml = check.contentType === null || /html/i.test(check.contentType);
  if (check.status !== null && check.status >= 200 && check.status < 300 && isHtml && check.body !== null && pageTitle(check.body) === null) {
    problems.push('untitled');
    details.push('the page has no <title>');
  }
  if (problems.length === 0) return null;
  const detail = `${details.join('; ')}.`;
  return {
    kind: 'site_performance',
    url: check.url,
    problems,
    status: check.status,
    durationMs: check.durationMs,
    location: check.location,
    detail: detail[0]!.toUpperCase() + detail.slice(1),
  };
}
