import t from 'tap';
import { startAgentRun } from '../../src/commands/agentRuns.ts';
import { creditsOf, grantCredits } from '../../src/commands/credits.ts';
import { agentRunStream } from '../../src/domain/agentRun.ts';
import { creditsStream } from '../../src/domain/credits.ts';
import { startAgentRunner } from '../../src/processors/agentRuns/startAgentRunner.ts';
import { getAgentRun } from '../../src/readModels/agentRuns.ts';
import { settle } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { agentsPath, testAgentWork, testRegistry } from './helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// The runner's own lease is long: on a loaded machine a 1 s lease expired between renewals and the sweep took its own run over (attempt 2). The take-over test sets short leases for its dead workers itself.
const env = { AI_CREDITS_ENFORCED: 'true', AGENT_RUN_LEASE_MS: '10000', AGENT_SCHEDULE_INTERVAL_MS: '1000', AGENT_RUNNER_WORKER_ID: 'runner-a' };
const app = await startTestApp({ env, agentWork: testAgentWork() });
t.teardown(() => app.close());
const tenant = await createTenant(app.services, { plan: 'advanced' });
await grantCredits(app.services, { teamId: tenant.teamId, amount: 10 });
const runner = await startAgentRunner(app.services);
t.teardown(() => runner.stop());

const inject = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) =>
  app.fastify.inject({ method, url, headers: bearer(tenant.key), ...(payload ? { payload } : {}) });
const runNow = async (agentKey: string) => {
  const res = await inject('POST', `${agentsPath(tenant.siteId)}/${agentKey}/run`);
  if (res.statusCode !== 202) throw new Error(`run refused: ${res.body}`);
  return res.json().run.id as string;
};
async function finished(runId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await settle(app.services);
    const run = await getAgentRun(app.services.readModels, runId);
    if (run && (run.status === 'succeeded' || run.status === 'failed')) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${run?.status}`);
    await sleep(50);
  }
}

for (const [url, text] of [
  ['https://example.test/worm-bins', 'Worm bins turn kitchen scraps into compost. '.repeat(60)],
  ['https://example.test/soil', 'Healthy soil holds water and feeds roots. '.repeat(50)],
  ['https://example.test/mulch', 'Mulch keeps beds moist.'],
] as const) {
  const res = await inject('PUT', `/api/v1/sites/${tenant.siteId}/articles`, { url, title: url.split('/').pop()!, text });
  if (res.statusCode !== 201) throw new Error(res.body);
}
for (const key of ['article_boost', 'interlinking', 'ai_prompt']) {
  const res = await inject('PUT', `${agentsPath(tenant.siteId)}/${key}`, { isActive: true, settings: key === 'article_boost' ? { minWords: 100 } : {} });
  if (res.statusCode !== 200) throw new Error(res.body);
}

t.test('a run executes the agent work on the articles: succeeded, counted, its proposal an opportunity, its credits debited', async (t) => {
  const runId = await runNow('article_boost');
  const run = await finished(runId);
  t.match(run, { status: 'succeeded', attempt: 1, counts: { articlesRead: 3, refreshesProposed: 1 }, creditsUsed: 2 });
  t.equal(run.opportunityIds.length, 1);
  const types = (await app.services.events.readStream(agentRunStream(runId))).map((e) => e.type);
  t.same(types.filter((x) => x !== 'AgentRunLeaseRenewed'), ['AgentRunStarted', 'OpportunityProposed', 'AgentRunSucceeded']);

  const opportunities = (await inject('GET', `/api/v1/sites/${tenant.siteId}/outreach/opportunities?kind=article_boost`)).json().opportunities;
  t.equal(opportunities.length, 1);
  t.match(opportunities[0], {
    id: run.opportunityIds[0],
    kind: 'article_boost',
    conversationId: null,
    entrySource: null,
    targetUrl: 'https://example.test/mulch',
    runId,
    details: { kind: 'article_boost', url: 'https://example.test/mulch', reasons: ['thin'], detail: '4 words' },
  });
  t.same((await inject('GET', `/api/v1/sites/${tenant.siteId}/outreach/opportunities?kind=inbound_pitch`)).json().opportunities, [], 'filtered by kind');

  await runner.runner.waitForPosition(await app.services.events.headPosition(), 10_000);
  t.match(await creditsOf(app.services, tenant.teamId), { granted: 10, debited: 2, balance: 8 });
  const debits = (await app.services.events.readStream(creditsStream(tenant.teamId))).filter((e) => e.type === 'CreditsDebited');
  t.same(debits.map((e) => (e.data as { runId: string }).runId), [runId], 'debited once for the run');

  const listed = (await inject('GET', `${agentsPath(tenant.siteId)}`)).json().agents[2];
  t.match(listed.lastRun, { id: runId, status: 'succeeded' }, 'GET agents shows the last run');
});

t.test('work that throws: failed with its reason; no work installed: work_unavailable', async (t) => {
  const run = await finished(await runNow('interlinking'));
  t.match(run, { status: 'failed', failureReason: 'work_failed', failureDetail: 'the work broke', opportunityIds: [] });

  await runner.stop();
  const bare = await startAgentRunner(app.services, undefined, { agentWork: testAgentWork(null), workerId: 'bare' });
  const unavailable = await finished(await runNow('ai_prompt'));
  t.match(unavailable, { status: 'failed', failureReason: 'work_unavailable' });
  await bare.stop();
  await runner.runner.start();
});

t.test('GET runs filters by agent, status and time, with a cursor', async (t) => {
  const base = `${agentsPath(tenant.siteId)}/runs`;
  const all = (await inject('GET', base)).json().runs;
  t.equal(all.length, 3);
  t.same((await inject('GET', `${base}?agentKey=interlinking`)).json().runs.map((r: { agentKey: string }) => r.agentKey), ['interlinking']);
  t.same((await inject('GET', `${base}?status=succeeded`)).json().runs.map((r: { id: string }) => r.id), [all[2].id]);
  t.same((await inject('GET', `${base}?queuedAfter=${encodeURIComponent(all[1].queuedAt)}`)).json().runs.map((r: { id: string }) => r.id), [all[0].id]);
  const first = (await inject('GET', `${base}?limit=2`)).json();
  t.equal(first.hasMore, true);
  const second = (await inject('GET', `${base}?limit=2&cursor=${first.nextCursor}`)).json();
  t.same([...first.runs, ...second.runs].map((r: { id: string }) => r.id), all.map((r: { id: string }) => r.id));
  t.equal((await inject('GET', `${base}?status=stuck`)).statusCode, 400);
  t.equal((await inject('GET', `${base}?agentKey=nope`)).statusCode, 400);
});

t.test('a run whose worker stopped renewing is taken over once, then failed as worker_lost', async (t) => {
  const ref = (runId: string) => ({ runId, siteId: tenant.siteId, teamId: tenant.teamId, agentKey: 'article_boost' as const });
  // A worker that "died" right after starting: its lease (300 ms) runs out, nobody renews it.
  await runner.stop();
  const runId = await runNow('article_boost');
  await startAgentRun(app.services, { run: ref(runId), workerId: 'dead-1', leaseMs: 300 });
  await runner.runner.start();
  const recovered = await finished(runId);
  t.match(recovered, { status: 'succeeded', attempt: 2 }, 'the second attempt succeeded');

  await runner.stop();
  const twice = await runNow('article_boost');
  await startAgentRun(app.services, { run: ref(twice), workerId: 'dead-1', leaseMs: 1 });
  await sleep(5);
  await startAgentRun(app.services, { run: ref(twice), workerId: 'dead-2', leaseMs: 300 });
  await runner.runner.start();
  const lost = await finished(twice);
  t.match(lost, { status: 'failed', attempt: 2, failureReason: 'worker_lost', failureDetail: /dead-2/ });
});

t.test('scheduled runs: a cadence queues one run per slot through the same path, even with two runners', async (t) => {
  const second = await startAgentRunner(app.services, undefined, { agentWork: testAgentWork(testRegistry()), workerId: 'runner-b' });
  t.teardown(() => second.stop());
  t.equal((await inject('PUT', `${agentsPath(tenant.siteId)}/ai_prompt`, { cadenceHours: 1 })).statusCode, 200);
  const deadline = Date.now() + 20_000;
  let scheduled: { id: string; status: string }[] = [];
  while (Date.now() < deadline) {
    scheduled = (await inject('GET', `${agentsPath(tenant.siteId)}/runs?agentKey=ai_prompt`)).json().runs.filter((r: { trigger: string }) => r.trigger === 'scheduled');
    if (scheduled.some((r) => r.status === 'succeeded')) break;
    await sleep(100);
  }
  t.equal(scheduled.length, 1, 'one run for the slot');
  t.equal(scheduled[0]?.status, 'succeeded');
  await sleep(2_500); // two more scheduler ticks of each runner
  const after = (await inject('GET', `${agentsPath(tenant.siteId)}/runs?agentKey=ai_prompt`)).json().runs.filter((r: { trigger: string }) => r.trigger === 'scheduled');
  t.equal(after.length, 1, 'still one');
});

t.test('changing the cadence does not queue a run at once: one scheduled run per cadence, whatever the changes', async (t) => {
  const site = await createTenant(app.services, { plan: 'advanced' });
  await grantCredits(app.services, { teamId: site.teamId, amount: 10 });
  const put = (payload: object) => app.fastify.inject({ method: 'PUT', url: `${agentsPath(site.siteId)}/article_boost`, headers: bearer(site.key), payload });
  const scheduledRuns = async () => (await app.fastify.inject({ method: 'GET', url: `${agentsPath(site.siteId)}/runs?agentKey=article_boost`, headers: bearer(site.key) })).json().runs.filter((r: { trigger: string }) => r.trigger === 'scheduled');
  t.equal((await put({ isActive: true, cadenceHours: 1 })).statusCode, 200);
  const deadline = Date.now() + 20_000;
  while ((await scheduledRuns()).length === 0 && Date.now() < deadline) await sleep(100);
  t.equal((await scheduledRuns()).length, 1, 'the first slot runs as the agent is switched on');
  // From an audit: each new cadence names new slots, and each change queued a run at once.
  for (const cadenceHours of [2, 3, 4]) t.equal((await put({ cadenceHours })).statusCode, 200);
  await sleep(2_500); // two more ticks of the scheduler
  t.equal((await scheduledRuns()).length, 1, 'still one');
});
