import t from 'tap';
import { startBackgroundRoles } from '../../src/processors/startBackgroundRoles.ts';
import { getAgentRun } from '../../src/readModels/agentRuns.ts';
import { fakeOpenAi } from '../helpers/fakeOpenAi.ts';
import { settle } from '../helpers/http.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { apiCall } from './helpers.ts';

/**
 * Under `npm start` (WORKERS_IN_THREAD) the agent runner runs in the background roles' thread, not
 * on the event loop that serves requests: an audit measured an interlinking run over 40 articles
 * holding every team's requests for 1.5 s (about 36 ms per article). Here nothing on the API thread
 * runs agent runs, and a run queued over REST is executed and recorded by the thread.
 */
t.test('a queued run is executed by the background roles thread', async (t) => {
  // A language model that fails: the refinement's warning comes from the thread.
  const model = await fakeOpenAi(t);
  const app = await startTestApp({ projectionsInThread: true, env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: model.baseURL, OPENAI_TIMEOUT_MS: '2000' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services, { plan: 'advanced', domain: 'b.example' });
  const call = (method: 'PUT' | 'POST', url: string, payload?: object) => apiCall(app)(tenant.key, method, url, payload);
  for (const [slug, text] of [['worm-bins', 'Worm bins turn kitchen scraps into compost. '.repeat(20)], ['soil', 'Healthy soil holds water. Worm bins help. '.repeat(10)], ['mulch', 'Mulch keeps beds moist.']] as const) {
    await call('PUT', `/api/v1/sites/${tenant.siteId}/articles`, { url: `https://b.example/${slug}`, title: slug.replace('-', ' '), text });
  }
  await call('PUT', `/api/v1/sites/${tenant.siteId}/agents/interlinking`, { isActive: true });

  const errors: unknown[] = [];
  const warnings: Array<[string | undefined, unknown]> = [];
  const roles = await startBackgroundRoles(app.services, app.projections, { log: { error: (obj, msg) => errors.push([msg, obj]), warn: (obj, msg) => warnings.push([msg, obj]) } });
  t.teardown(() => Promise.all(roles.roles.map((r) => r.stop(1_000))));
  t.equal(roles.mode, 'thread');
  t.same(roles.roles.map((r) => r.name), ['webhook delivery and agents thread'], 'one role, the thread: no runner on this event loop');

  const { run } = await call('POST', `/api/v1/sites/${tenant.siteId}/agents/interlinking/run`);
  let doc = null;
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    await settle(app.services);
    doc = await getAgentRun(app.services.readModels, run.id);
    if (doc?.status === 'succeeded' || doc?.status === 'failed') break;
  }
  t.equal(doc?.status, 'succeeded', 'the thread ran it');
  t.same(errors, []);
  t.match(
    warnings.find(([msg]) => msg?.startsWith('language-model refinement failed')),
    ['language-model refinement failed; the heuristic proposals were kept', { agentKey: 'interlinking', err: Error }],
    "the thread's log keeps its fields (agentKey) with the error",
  );
});
