import t from 'tap';
import { requestAgentRun } from '../../src/commands/agentRuns.ts';
import { creditsOf, debitCredits, grantCredits } from '../../src/commands/credits.ts';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { startAgentRunner } from '../../src/processors/agentRuns/startAgentRunner.ts';
import { type AgentRunDoc, getAgentRun } from '../../src/readModels/agentRuns.ts';
import { settle } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { agentsPath, testAgentWork } from './helpers.ts';

/**
 * What a run's work needs beyond the licence, plan and agent is checked again when the run starts:
 * the team's credits (another run may have spent them since this one was queued) and, for the
 * Outreach Agent, the site's verified sending domain.
 */
const app = await startTestApp({ agentWork: testAgentWork(), env: { AI_CREDITS_ENFORCED: 'true', AGENT_RUN_LEASE_MS: '1000', AGENT_SCHEDULE_INTERVAL_MS: '3600000' } });
t.teardown(() => app.close());

async function ended(runId: string): Promise<AgentRunDoc | null> {
  let run: AgentRunDoc | null = null;
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    await settle(app.services);
    run = await getAgentRun(app.services.readModels, runId);
    if (run?.status === 'failed' || run?.status === 'succeeded') break;
  }
  return run;
}

t.test('credits spent by another run after this one was queued: it fails insufficient_credits, and is not debited', async (t) => {
  const tenant = await createTenant(app.services, { plan: 'advanced' });
  const activated = await app.fastify.inject({ method: 'PUT', url: `${agentsPath(tenant.siteId)}/ai_prompt`, headers: bearer(tenant.key), payload: { isActive: true } });
  t.equal(activated.statusCode, 200);
  await grantCredits(app.services, { teamId: tenant.teamId, amount: 3 });
  const { run } = await requestAgentRun(app.services, { teamId: tenant.teamId, siteId: tenant.siteId, agentKey: 'ai_prompt', trigger: 'on_demand', requestedBy: 'test' });
  await debitCredits(app.services, { teamId: tenant.teamId, siteId: tenant.siteId, runId: 'an-earlier-run', amount: 3 });
  const runner = await startAgentRunner(app.services);
  t.teardown(() => runner.stop());
  t.match(await ended(run.id), { status: 'failed', failureReason: 'insufficient_credits', failureDetail: /balance is 0/, creditsUsed: 0, opportunityIds: [] });
  t.equal((await creditsOf(app.services, tenant.teamId)).balance, 0, 'the balance stays where the other run left it: this one is not debited');
});

t.test("an outreach run queued before the site's sending domain lost its verification fails sending_domain_unverified", async (t) => {
  const tenant = await createTenant(app.services, { plan: 'advanced', sendingDomainVerified: true });
  await grantCredits(app.services, { teamId: tenant.teamId, amount: 10 });
  const activated = await app.fastify.inject({ method: 'PUT', url: `${agentsPath(tenant.siteId)}/outreach`, headers: bearer(tenant.key), payload: { isActive: true } });
  t.equal(activated.statusCode, 200);
  const { run } = await requestAgentRun(app.services, { teamId: tenant.teamId, siteId: tenant.siteId, agentKey: 'outreach', trigger: 'on_demand', requestedBy: 'test' });
  await changeSiteSettings(app.services, { siteId: tenant.siteId, changes: { sendingDomainVerified: false } });
  const runner = await startAgentRunner(app.services);
  t.teardown(() => runner.stop());
  t.match(await ended(run.id), { status: 'failed', failureReason: 'sending_domain_unverified', failureDetail: /verify its sending domain/ });
});
