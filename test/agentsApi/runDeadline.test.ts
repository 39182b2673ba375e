import t from 'tap';
import { loadProspects } from '../../src/commands/prospects.ts';
import { startAgentRunner } from '../../src/processors/agentRuns/startAgentRunner.ts';
import { getAgentRun } from '../../src/readModels/agentRuns.ts';
import { settle } from '../helpers/http.ts';
import { startTarpit } from '../helpers/tarpit.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { apiCall } from './helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The runner's slots are shared by every team: a run may take AGENT_RUN_MAX_MS, then its work is
 * asked to stop and what it did is its result. An audit had one team's outreach runs over a site
 * that never answers hold both slots (10 s per prospect, up to 200 prospects a run) while another
 * team's run waited. A prospect the stop cut short is left for the next run, not skipped as unreachable.
 */
t.test('an outreach run over a site that never answers ends at AGENT_RUN_MAX_MS; its unfinished prospects stay new', async (t) => {
  const { port } = await startTarpit(t);

  const app = await startTestApp({ env: { WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', AGENT_RUN_LEASE_MS: '10000', AGENT_RUN_MAX_MS: '1500' } });
  const runner = await startAgentRunner(app.services);
  t.teardown(async () => {
    await runner.stop();
    await app.close();
  });
  const a = await createTenant(app.services, { plan: 'advanced', domain: 'a.example', sendingDomainVerified: true });
  const call = (method: 'PUT' | 'POST', url: string, payload?: object) => apiCall(app)(a.key, method, url, payload);
  const urls = [0, 1, 2].map((i) => `https://127.0.0.1:${port}/p${i}`);
  await call('POST', `/api/v1/sites/${a.siteId}/agents/outreach/prospects`, { prospects: urls.map((url) => ({ url })) });
  await call('PUT', `/api/v1/sites/${a.siteId}/agents/outreach`, { isActive: true });
  const started = Date.now();
  const { run } = await call('POST', `/api/v1/sites/${a.siteId}/agents/outreach/run`);
  let doc = null;
  for (;;) {
    await settle(app.services);
    doc = await getAgentRun(app.services.readModels, run.id);
    if (doc?.status === 'succeeded' || doc?.status === 'failed' || Date.now() - started > 20_000) break;
    await sleep(50);
  }
  const took = Date.now() - started;
  t.equal(doc?.status, 'succeeded', 'what the run did is its result');
  t.ok(took < 8_000, `the run ended after ${took} ms (three prospects of 10 s each before)`);
  t.match(doc?.counts, { prospectsLooked: 0, unreachable: 0, pitchesSent: 0 }, 'the prospect it was fetching when the time was up is not counted');
  const state = await loadProspects(app.services, a.siteId);
  t.same(urls.map((url) => state.prospects.get(url)?.status), ['new', 'new', 'new'], 'every prospect is left for the next run');
});
