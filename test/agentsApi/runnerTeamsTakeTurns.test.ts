import t, { type Test } from 'tap';
import { startAgentRunner } from '../../src/processors/agentRuns/startAgentRunner.ts';
import { getAgentRun } from '../../src/readModels/agentRuns.ts';
import { settle } from '../helpers/http.ts';
import { startTarpit } from '../helpers/tarpit.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { apiCall } from './helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The runner's slots are shared by every team: team A queues two outreach runs (to a site that never
 * answers: each ends at AGENT_RUN_MAX_MS), then team B one short run. Returns the three runs as they
 * ended. `pauseMs`: between A's runs and B's (the runner has seen A's two).
 */
async function twoTeamsRuns(t: Test, slots: number, maxRunMs: number, pauseMs = 0) {
  const { port } = await startTarpit(t);
  const app = await startTestApp({
    env: { WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', AGENT_RUN_CONCURRENCY: String(slots), AGENT_RUN_LEASE_MS: '3000', AGENT_RUN_MAX_MS: String(maxRunMs) },
  });
  const runner = await startAgentRunner(app.services);
  t.teardown(async () => {
    await runner.stop();
    await app.close();
  });
  const a = await createTenant(app.services, { plan: 'advanced', domain: 'a.example', sendingDomainVerified: true });
  const b = await createTenant(app.services, { plan: 'advanced', domain: 'b.example' });
  const call = apiCall(app);
  await call(a.key, 'POST', `/api/v1/sites/${a.siteId}/agents/outreach/prospects`, { prospects: [0, 1, 2, 3].map((i) => ({ url: `https://127.0.0.1:${port}/p${i}` })) });
  await call(a.key, 'PUT', `/api/v1/sites/${a.siteId}/agents/outreach`, { isActive: true });
  await call(b.key, 'PUT', `/api/v1/sites/${b.siteId}/articles`, { url: 'https://b.example/worm-bins', title: 'Worm bins', text: 'Worm bins turn kitchen scraps into compost.' });
  await call(b.key, 'PUT', `/api/v1/sites/${b.siteId}/agents/interlinking`, { isActive: true });

  const a1 = (await call(a.key, 'POST', `/api/v1/sites/${a.siteId}/agents/outreach/run`)).run.id as string;
  const a2 = (await call(a.key, 'POST', `/api/v1/sites/${a.siteId}/agents/outreach/run`)).run.id as string;
  if (pauseMs) await sleep(pauseMs);
  const b1 = (await call(b.key, 'POST', `/api/v1/sites/${b.siteId}/agents/interlinking/run`)).run.id as string;
  const done = async (id: string) => ['succeeded', 'failed'].includes((await getAgentRun(app.services.readModels, id))?.status ?? '');
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    await settle(app.services);
    if ((await done(a1)) && (await done(a2)) && (await done(b1))) break;
  }
  const [r1, r2, rb] = await Promise.all([a1, a2, b1].map((id) => getAgentRun(app.services.readModels, id)));
  t.same([r1?.status, r2?.status, rb?.status], ['succeeded', 'succeeded', 'succeeded'], 'all three ran');
  return { r1: r1!, r2: r2!, rb: rb! };
}

/**
 * When every slot is busy, a run of a team that holds one already waits, so another team's run queued
 * after it takes the next free slot: before, the runner took runs strictly in log order and the other
 * team waited behind both.
 */
t.test("another team's run takes the next free slot before a team's second run", async (t) => {
  const { r1, r2, rb } = await twoTeamsRuns(t, 1, 2_000);
  t.ok(Date.parse(rb.startedAt!) < Date.parse(r2.startedAt!), `team B's run started before team A's second (B ${rb.startedAt}, A2 ${r2.startedAt}, A1 ${r1.startedAt})`);
  t.ok(Date.parse(rb.startedAt!) >= Date.parse(r1.finishedAt!), 'one slot: B took it when A1 ended');
});

/** A team holds every slot but one: its two long runs held both, and another team's run waited for one to end. */
t.test("with two slots, one team's two long runs leave one for another team's run", async (t) => {
  const { r1, r2, rb } = await twoTeamsRuns(t, 2, 3_000, 300);
  t.ok(Date.parse(rb.finishedAt!) < Date.parse(r1.finishedAt!), `team B's run ended while team A's first still ran (B ${rb.startedAt}–${rb.finishedAt}, A1 ${r1.startedAt}–${r1.finishedAt})`);
  t.ok(Date.parse(r2.startedAt!) >= Date.parse(r1.finishedAt!), "team A's second waited for its first: a team holds every slot but one");
});
