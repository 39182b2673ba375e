import t from 'tap';
import { requestAgentRun } from '../../src/commands/agentRuns.ts';
import { grantCredits } from '../../src/commands/credits.ts';
import { expectError } from '../helpers/http.ts';
import { TestClock, bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { agentsPath, testAgentWork } from './helpers.ts';

const MINUTE = 60_000;
// 12:50, so the hour's five runs straddle the ledger's clock-hour boundary.
const clock = new TestClock(new Date('2026-03-02T12:50:00.000Z'));
const app = await startTestApp({ clock, agentWork: testAgentWork(), env: { AI_CREDITS_ENFORCED: 'true', WRITE_RATE_LIMIT_PER_MINUTE: '1000' } });
t.teardown(() => app.close());
const tenant = await createTenant(app.services, { plan: 'advanced' });
const other = await createTenant(app.services, { plan: 'pro' });

const run = (agentKey: string, who = tenant) => app.fastify.inject({ method: 'POST', url: `${agentsPath(who.siteId)}/${agentKey}/run`, headers: bearer(who.key) });
const activate = (agentKey: string, who = tenant) =>
  app.fastify.inject({ method: 'PUT', url: `${agentsPath(who.siteId)}/${agentKey}`, headers: bearer(who.key), payload: { isActive: true } });

t.test('an inactive agent: 409 AGENT_INACTIVE', async (t) => {
  const res = await run('article_boost');
  expectError(t, res, 409, 'AGENT_INACTIVE');
  t.match(res.json().error.message, /article_boost/);
});

t.test('credit enforcement on: no credits, 402 INSUFFICIENT_CREDITS; granted, the run is queued (202)', async (t) => {
  t.equal((await activate('article_boost')).statusCode, 200);
  const refused = await run('article_boost');
  expectError(t, refused, 402, 'INSUFFICIENT_CREDITS');
  t.match(refused.json().error.message, /balance is 0/);
  await grantCredits(app.services, { teamId: tenant.teamId, amount: 50 });
  const res = await run('article_boost');
  t.equal(res.statusCode, 202);
  t.match(res.json().run, { agentKey: 'article_boost', trigger: 'on_demand', status: 'queued', attempt: 0, counts: {}, opportunityIds: [] });
  const listed = (await app.fastify.inject({ url: `${agentsPath(tenant.siteId)}/runs`, headers: bearer(tenant.key) })).json();
  t.equal(listed.runs[0].id, res.json().run.id, 'listed at once (read your writes)');
});

t.test('5 on-demand runs per sliding hour per site, across agents; the 6th gets 429 with Retry-After', async (t) => {
  // One run so far (12:50). Four more over four minutes, on two agents.
  t.equal((await activate('ai_prompt')).statusCode, 200);
  for (const key of ['ai_prompt', 'article_boost', 'ai_prompt', 'article_boost']) {
    clock.advance(MINUTE);
    t.equal((await run(key)).statusCode, 202, `${key} at ${clock.now().toISOString()}`);
  }
  // 12:54 now; into the next clock hour, still within the sliding hour of all five.
  clock.advance(20 * MINUTE); // 13:14
  const sixth = await run('ai_prompt');
  expectError(t, sixth, 429, 'RATE_LIMITED', 'the 6th in the hour');
  // The 12:50 run leaves the hour at 13:50:00: 36 minutes from 13:14.
  t.equal(sixth.headers['retry-after'], String(36 * 60));
  t.match(sixth.json().error.message, /5 on-demand agent runs per hour/);
  const listed = (await app.fastify.inject({ url: agentsPath(tenant.siteId), headers: bearer(tenant.key) })).json();
  t.same(listed.onDemandRuns, { perHour: 5, leftThisHour: 0 });

  t.equal((await activate('interlinking', other)).statusCode, 200);
  await grantCredits(app.services, { teamId: other.teamId, amount: 1 });
  t.equal((await run('interlinking', other)).statusCode, 202, "another site's limit is its own");

  clock.advance(36 * MINUTE - 1_000); // 13:49:59
  const still = await run('ai_prompt');
  expectError(t, still, 429, 'RATE_LIMITED', 'one second before the first run slides out');
  t.equal(still.headers['retry-after'], '1');
  clock.advance(1_000); // 13:50:00
  t.equal((await run('ai_prompt')).statusCode, 202, 'the hour slid: one run admitted');
  const again = await run('ai_prompt');
  expectError(t, again, 429, 'RATE_LIMITED', 'and only one');
  t.equal(again.headers['retry-after'], String(60), 'the 12:51 run leaves at 13:51');
});

t.test('scheduled runs take the same path but not the on-demand allowance, and a slot is queued once', async (t) => {
  const input = { teamId: tenant.teamId, siteId: tenant.siteId, agentKey: 'ai_prompt' as const, trigger: 'scheduled' as const, requestedBy: null, runId: 'sched-test-slot-1' };
  const first = await requestAgentRun(app.services, input);
  t.equal(first.queued, true, 'queued although on-demand runs are used up');
  const second = await requestAgentRun(app.services, input);
  t.equal(second.queued, false, 'the same slot is not queued twice');
  await t.rejects(requestAgentRun(app.services, { ...input, agentKey: 'interlinking', runId: 'sched-x' }), { code: 'AGENT_INACTIVE' }, 'gates still apply');
});

t.test('at the clock-hour boundary, an instance whose clock trails cannot add a 6th run to the hour another instance already counted', async (t) => {
  const who = await createTenant(app.services, { plan: 'pro' });
  await grantCredits(app.services, { teamId: who.teamId, amount: 50 });
  t.equal((await activate('interlinking', who)).statusCode, 200);
  const at = (iso: string) => ({ ...app.services, clock: new TestClock(new Date(iso)) });
  const input = { teamId: who.teamId, siteId: who.siteId, agentKey: 'interlinking' as const, trigger: 'on_demand' as const, requestedBy: null };
  for (const minute of ['10', '20', '30', '40']) await requestAgentRun(at(`2026-03-03T09:${minute}:00.000Z`), input);
  // Instance A is already at 10:00:00.500: the 5th run, counted against the 09:00 ledger as A read it.
  const fifth = await requestAgentRun(at('2026-03-03T10:00:00.500Z'), input);
  t.equal(fifth.run.status, 'queued');
  // Instance B's clock trails by a second: it would queue into the 09:00 ledger, which then held
  // only four runs. The 09:00 ledger is closed, so B's request is decided with the 10:00 one.
  await t.rejects(requestAgentRun(at('2026-03-03T09:59:59.500Z'), input), { code: 'RATE_LIMITED' }, 'the 6th in the sliding hour is refused');
  const runs = (await app.fastify.inject({ url: `${agentsPath(who.siteId)}/runs`, headers: bearer(who.key) })).json().runs;
  t.equal(runs.length, 5, 'five runs, not six');
});
