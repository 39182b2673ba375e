import type { Test } from 'tap';
import type { ArticleInput } from '../../src/domain/agentWork.ts';
import type { Plan } from '../../src/domain/site.ts';
import { startAgentRunner } from '../../src/processors/agentRuns/startAgentRunner.ts';
import { bearer, createTenant, startTestApp, type TestApp, type Tenant } from '../helpers/testApp.ts';
import { agentsPath } from './helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An opportunity as `GET .../outreach/opportunities` lists it (the fields these tests read). */
export interface OpportunityJson {
  id: string;
  kind: string;
  conversationId: string | null;
  entrySource: string | null;
  targetUrl: string | null;
  sourceUrl: string | null;
  anchorText: string | null;
  suggestedSentence: string | null;
  runId: string | null;
  details: Record<string, unknown> | null;
}

/**
 * The product path end to end: the service with the real agents' work (no `agentWork` injected),
 * the real runner, one site on the given domain and plan, and the REST calls a client makes.
 */
export async function startProduct(t: Test, options: { env?: Record<string, string>; plan?: Plan; domain: string; sendingDomainVerified?: boolean }) {
  const app: TestApp = await startTestApp({ env: options.env });
  const tenant: Tenant = await createTenant(app.services, { plan: options.plan ?? 'advanced', domain: options.domain, sendingDomainVerified: options.sendingDomainVerified });
  const runner = await startAgentRunner(app.services);
  t.teardown(async () => {
    await runner.stop();
    await app.close();
  });
  const inject = async (method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) =>
    app.fastify.inject({ method, url, headers: bearer(tenant.key), ...(payload ? { payload } : {}) });
  const site = `/api/v1/sites/${tenant.siteId}`;

  /** Upserts an article through `PUT .../articles`; its links become empty anchors so the text stays the corpus text. */
  async function putArticle(a: Pick<ArticleInput, 'url' | 'title' | 'text' | 'links' | 'publishedAt' | 'updatedAt'>) {
    const paragraphs = a.text.split('\n\n').map((p) => `<p>${p.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</p>`);
    const anchors = a.links.map((l) => `<a href="${l}"></a>`).join('');
    const body = a.links.length > 0 ? { html: `${paragraphs.join('\n')}\n${anchors}` } : { text: a.text };
    const res = await inject('PUT', `${site}/articles`, { url: a.url, title: a.title, ...body, publishedAt: a.publishedAt, updatedAt: a.updatedAt });
    if (res.statusCode !== 201) throw new Error(`article ${a.url} not created: ${res.statusCode} ${res.body}`);
    return res.json().article as { id: string; url: string; internalLinks: string[]; wordCount: number };
  }

  async function activate(agentKey: string, settings: Record<string, unknown>) {
    const res = await inject('PUT', `${agentsPath(tenant.siteId)}/${agentKey}`, { isActive: true, settings });
    if (res.statusCode !== 200) throw new Error(`${agentKey} not configured: ${res.statusCode} ${res.body}`);
    return res.json();
  }

  /** `POST .../run`, then `GET .../agents/runs?agentKey=` until the run has ended. */
  async function runToEnd(agentKey: string, timeoutMs = 60_000) {
    const queued = await inject('POST', `${agentsPath(tenant.siteId)}/${agentKey}/run`);
    if (queued.statusCode !== 202) throw new Error(`run refused: ${queued.statusCode} ${queued.body}`);
    const runId = queued.json().run.id as string;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const runs = (await inject('GET', `${agentsPath(tenant.siteId)}/runs?agentKey=${agentKey}`)).json().runs as { id: string; status: string }[];
      const run = runs.find((r) => r.id === runId);
      if (run && (run.status === 'succeeded' || run.status === 'failed')) return run as { id: string; status: string; counts: Record<string, number>; opportunityIds: string[]; failureReason?: string };
      if (Date.now() > deadline) throw new Error(`run ${runId} still ${run?.status}`);
      await sleep(100);
    }
  }

  async function opportunities(kind: string): Promise<OpportunityJson[]> {
    const res = await inject('GET', `${site}/outreach/opportunities?kind=${kind}&limit=100`);
    if (res.statusCode !== 200) throw new Error(`opportunities: ${res.statusCode} ${res.body}`);
    return res.json().opportunities;
  }

  return { app, tenant, inject, site, putArticle, activate, runToEnd, opportunities };
}
