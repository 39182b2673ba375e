// POST .../run while the read models lag behind the log: the run is queued and counted against the
// hour's allowance either way, so the answer is its 202, not a 503 a client would retry (each retry
// queuing another run and spending the allowance).
import t from 'tap';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { agentsPath, testAgentWork } from './helpers.ts';
import { onDemandRunsLeft } from '../../src/commands/agentRuns.ts';
import { Browser, formFields, startOAuthApp } from '../oauth/helpers.ts';

t.test('a run requested while the read models are behind is answered 202 with the run', async (t) => {
  const app = await startTestApp({ env: { READ_YOUR_WRITES_TIMEOUT_MS: '300' }, agentWork: testAgentWork() });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services, { plan: 'pro' });
  const inject = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) =>
    app.fastify.inject({ method, url, headers: bearer(tenant.key), ...(payload ? { payload } : {}) });
  t.equal((await inject('PUT', `${agentsPath(tenant.siteId)}/article_boost`, { isActive: true })).statusCode, 200);
  const before = await onDemandRunsLeft(app.services, tenant.siteId);

  await app.services.projections.stop(); // a slow projection, a busy host
  const answer = await inject('POST', `${agentsPath(tenant.siteId)}/article_boost/run`);
  t.equal(answer.statusCode, 202, answer.body);
  const run = answer.json().run;
  t.match(run, { agentKey: 'article_boost', trigger: 'on_demand' });
  t.equal(await onDemandRunsLeft(app.services, tenant.siteId), before - 1, 'one request, one run counted');

  app.services.projections.start();
  await app.services.projections.waitFor(await app.services.events.headPosition(), 5000);
  const runs = (await inject('GET', `${agentsPath(tenant.siteId)}/runs`)).json().runs;
  t.same(runs.map((r: { id: string }) => r.id), [run.id], 'the run answered is the run listed');
});

t.test("the dashboard's Run now while the read models are behind: the run is queued once and the page says so (202), not 503", async (t) => {
  const { app, tenant, ownerEmail, issuer } = await startOAuthApp({ env: { READ_YOUR_WRITES_TIMEOUT_MS: '300' } });
  t.teardown(() => app.close());
  const browser = new Browser(issuer);
  await browser.signIn(ownerEmail);
  const action = `/dashboard/agents/${tenant.siteId}/article_boost`;
  const csrf = formFields((await browser.request('/dashboard/agents')).text, action).csrf!;
  t.equal((await browser.request(action, { form: { csrf, is_active: 'on' } })).status, 303);
  await app.services.projections.waitFor(await app.services.events.headPosition(), 5_000);
  const before = await onDemandRunsLeft(app.services, tenant.siteId);

  await app.services.projections.stop();
  const ran = await browser.request(`${action}/run`, { form: { csrf } });
  t.equal(await onDemandRunsLeft(app.services, tenant.siteId), before - 1, 'queued and counted');
  t.equal(ran.status, 202);
  t.match(ran.text, /Run [0-9A-Z]{26} of article_boost queued/);
  app.services.projections.start();
});
