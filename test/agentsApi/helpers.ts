import { z } from 'zod';
import type { AgentWorkWiring } from '../../src/agentWorkWiring.ts';
import type { AgentWork, AgentWorkRegistry } from '../../src/agentWork/types.ts';
import type { WorkSettingsSchemas } from '../../src/domain/agentSettingsSchemas.ts';
import type { OpportunityProposal } from '../../src/domain/agentWork.ts';
import { bearer, type TestApp } from '../helpers/testApp.ts';

/** Test work settings: a few fields per agent, each with a default, as src/agentWork/settings.ts will have. */
export const testWorkSettings: WorkSettingsSchemas = {
  article_creation: z.object({ seedKeywords: z.array(z.string().min(1).max(80)).max(50).default([]) }).strict(),
  ai_prompt: z.object({ maxQuestions: z.number().int().min(1).max(50).default(10) }).strict(),
  article_boost: z.object({ staleAfterDays: z.number().int().min(1).max(3650).default(365), minWords: z.number().int().min(0).default(300) }).strict(),
  interlinking: z.object({ maxLinksPerArticle: z.number().int().min(1).max(20).default(3) }).strict(),
  site_performance: z.object({ slowMs: z.number().int().min(100).max(60_000).default(2_000) }).strict(),
  outreach: z.object({ pitchTemplate: z.string().max(2000).default('Hello') }).strict(),
};

/** Real test work: reads the site's articles and proposes a boost for the shortest one (article_boost). */
export const shortestArticleBoost: AgentWork = async (run, deps) => {
  const articles = await deps.articles(run.siteId);
  const proposals: OpportunityProposal[] = [];
  const minWords = Number(run.settings['minWords']);
  const shortest = [...articles].sort((a, b) => a.text.length - b.text.length)[0];
  if (shortest && shortest.text.split(/\s+/).length < minWords) {
    proposals.push({ kind: 'article_boost', articleId: shortest.id, url: shortest.url, reasons: ['thin'], detail: `${shortest.text.split(/\s+/).length} words` });
  }
  return { proposals, counts: { articlesRead: articles.length, refreshesProposed: proposals.length }, creditsUsed: articles.length > 0 ? 2 : 0 };
};

const failing: AgentWork = async () => {
  throw new Error('the work broke');
};

/** Every agent's work for these tests: article_boost as above, interlinking throws, the rest count articles. */
export function testRegistry(overrides: Partial<Record<keyof AgentWorkRegistry, AgentWork>> = {}): AgentWorkRegistry {
  const counting: AgentWork = async (run, deps) => ({ proposals: [], counts: { articlesRead: (await deps.articles(run.siteId)).length }, creditsUsed: 0 });
  return {
    article_creation: counting,
    ai_prompt: counting,
    article_boost: shortestArticleBoost,
    interlinking: failing,
    site_performance: counting,
    outreach: counting,
    ...overrides,
  };
}

export const testAgentWork = (registry: AgentWorkRegistry | null = testRegistry()): AgentWorkWiring => ({ registry, workSettingsSchemas: testWorkSettings });

export const agentsPath = (siteId: string) => `/api/v1/sites/${siteId}/agents`;

/** Calls the API with an API key: the JSON answer, or an error naming a status of 300 or more (the runner tests' set-up). */
export const apiCall =
  (app: TestApp) =>
  async (key: string, method: 'PUT' | 'POST', url: string, payload?: object) => {
    const r = await app.fastify.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
    if (r.statusCode >= 300) throw new Error(`${r.statusCode} ${r.body}`);
    return r.json();
  };
