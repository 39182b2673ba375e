import t from 'tap';
import { requestAgentRun } from '../../src/commands/agentRuns.ts';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { ServiceError } from '../../src/domain/errors.ts';
import { scheduleDueRuns } from '../../src/processors/agentRuns/scheduler.ts';
import { startAgentRunner } from '../../src/processors/agentRuns/startAgentRunner.ts';
import { getAgentRun } from '../../src/readModels/agentRuns.ts';
import { settle } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { agentsPath, testAgentWork } from './helpers.ts';

/**
 * An unlicensed site gets no agent runs by any path (REST answers 403 SITE_NOT_LICENSED before the
 * route): not from the scheduler, the CLI's path, nor a run queued before the licence lapsed.
 */
const app = await startTestApp({ agentWork: testAgentWork(), env: { AGENT_RUN_LEASE_MS: '1000', AGENT_SCHEDULE_INTERVAL_MS: '3600000', AGENT_RUNNER_WORKER_ID: 'gates' } });
t.teardown(() => app.close());
const tenant = await createTenant(app.services, { plan: 'advanced' });
const licensed = (value: boolean) => changeSiteSettings(app.services, { siteId: tenant.siteId, changes: { licensed: value } }).then(() => settle(app.services));
const activate = await app.fastify.inject({ method: 'PUT', url: `${agentsPath(tenant.siteId)}/ai_prompt`, headers: bearer(tenant.key), payload: { isActive: true, cadenceHours: 1 } });
if (activate.statusCode !== 200) throw new Error(activate.body);

t.test('queuing refuses an unlicensed site: scheduled runs and the CLI path too', async (t) => {
  await licensed(false);
  t.teardown(() => licensed(true));
  const warned: unknown[] = [];
  const log = { warn: (obj: unknown) => void warned.push(obj) };
  const refusals = new Map<string, string>();
  t.equal(await scheduleDueRuns(app.services, log, refusals), 0, 'the scheduler queues nothing');
  t.equal(await scheduleDueRuns(app.services, log, refusals), 0, 'nor on its next tick');
  t.equal(warned.length, 1, 'the refusal is logged once, not on every tick');
  t.match(warned[0], { err: { code: 'SITE_NOT_LICENSED' }, siteId: tenant.siteId, agentKey: 'ai_prompt' });
  const refused = await requestAgentRun(app.services, { teamId: tenant.teamId, siteId: tenant.siteId, agentKey: 'ai_prompt', trigger: 'on_demand', requestedBy: 'cli' }).catch((e: unknown) => e);
  t.ok(refused instanceof ServiceError);
  t.match(refused, { code: 'SITE_NOT_LICENSED' });
});

t.test('a run queued before the licence lapsed fails when it starts (site_not_licensed), doing nothing', async (t) => {
  const { run } = await requestAgentRun(app.services, { teamId: tenant.teamId, siteId: tenant.siteId, agentKey: 'ai_prompt', trigger: 'on_demand', requestedBy: 'test' });
  await licensed(false);
  t.teardown(() => licensed(true));
  const runner = await startAgentRunner(app.services);
  t.teardown(() => runner.stop());
  let done = null;
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    await settle(app.services);
    done = await getAgentRun(app.services.readModels, run.id);
    if (done?.status === 'failed' || done?.status === 'succeeded') break;
  }
  t.match(done, { status: 'failed', failureReason: 'site_not_licensed' });
  t.same(done?.opportunityIds, [], 'no proposals');
});
