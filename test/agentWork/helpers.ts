import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OfflineRefiner } from '../../src/adapters/refining/offlineRefiner.ts';
import { pageFetcherFromConfig } from '../../src/adapters/http/safePageFetcher.ts';
import type { AgentWorkDeps, AgentRunInput } from '../../src/agentWork/types.ts';
import { loadConfig } from '../../src/config.ts';
import type { AgentKey } from '../../src/domain/agents.ts';
import type { ArticleInput } from '../../src/domain/agentWork.ts';
import type { Clock } from '../../src/ports/clock.ts';
import { createServices, type Services } from '../../src/services.ts';

/** Real services on a temporary data directory, and the deps an agent's work gets from the runner. */
export async function workServices(env: Record<string, string> = {}, clock?: Clock) {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-agentwork-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0', ...env });
  const services = await createServices(config, { clock });
  services.projections.start();
  return {
    services,
    async close() {
      await services.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function workDeps(services: Services, articles: ArticleInput[], extra: Partial<AgentWorkDeps> = {}): AgentWorkDeps {
  return {
    commands: services,
    readModels: services.readModels,
    config: services.config,
    mailer: services.mailer,
    fetcher: pageFetcherFromConfig(services.config),
    articles: async () => articles,
    refiner: new OfflineRefiner(),
    signal: new AbortController().signal,
    ...extra,
  };
}

export const runOf = <K extends AgentKey>(agentKey: K, siteId: string, settings: Record<string, unknown> = {}, now = '2026-11-23T12:00:00.000Z'): AgentRunInput<K> => ({
  runId: `run-${agentKey}`,
  agentKey,
  teamId: 'team-1',
  siteId,
  siteDomain: 'brewathome.example',
  settings,
  now,
});
