import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { outreach } from '../helpers/cli.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { type Family, parsePrometheusText } from './promText.ts';
import { startWorkerProcess } from './workerProcess.ts';

/**
 * An `outreach worker …` process follows the projections the API process runs, unless told to run
 * them (RUN_PROJECTIONS=true): two processes running them made the API reload every read model on
 * its event loop at each checkpoint the other moved (requests stalled for seconds).
 */
t.setTimeout(180_000);
const dataDir = mkdtempSync(join(tmpdir(), 'worker-projections-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
// Events no process has projected: the CLI appends and runs no projections.
const created = await outreach(['--json', 'team', 'create', '--name', 'Lag', '--owner-email', 'owner@lag.test'], env);
if (created.code !== 0) throw new Error(created.stderr);

const maxLag = (f: Family | undefined) => Math.max(...(f?.samples ?? []).map((s) => s.value));

/** Starts `outreach worker agent-runs` with `extra` env, scrapes its largest projection lag until `until` holds or `ms` passed, stops it. */
async function workerLag(extra: Record<string, string>, until: (lag: number) => boolean, ms: number): Promise<number> {
  const { child, exited, url } = await startWorkerProcess('agent-runs', { ...env, ...extra });
  try {
    let lag = NaN;
    for (const deadline = Date.now() + ms; Date.now() < deadline; ) {
      lag = maxLag(parsePrometheusText(await (await fetch(`${url}/metrics`)).text()).get('outreach_projection_lag'));
      if (until(lag)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return lag;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

t.test('by default a worker runs no projections: the lag nobody works off stays', async (t) => {
  const lag = await workerLag({}, () => false, 3_000);
  t.ok(lag > 0, `still behind after 3 s (lag ${lag}); a runner catches this log up in milliseconds`);
});

t.test('with RUN_PROJECTIONS=true it runs them', async (t) => {
  t.equal(await workerLag({ RUN_PROJECTIONS: 'true' }, (lag) => lag === 0, 20_000), 0, 'caught up');
});

t.test("a worker that follows takes in the API's writes: a run on a site created after it started", async (t) => {
  const app = await startTestApp({ env: { RUN_AGENT_RUNNER: 'false' } });
  t.teardown(() => app.close());
  // No metrics port: nothing scrapes it, so only the worker's own following brings its read models up to date.
  const { child, exited } = await startWorkerProcess('agent-runs', { DATA_DIR: app.dataDir, LOG_LEVEL: 'silent' }, { metrics: false });
  t.teardown(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  const tenant = await createTenant(app.services, { plan: 'advanced' });
  const agents = `/api/v1/sites/${tenant.siteId}/agents`;
  const call = (method: 'PUT' | 'POST' | 'GET', url: string, payload?: object) =>
    app.fastify.inject({ method, url, headers: bearer(tenant.key), ...(payload ? { payload } : {}) });
  t.equal((await call('PUT', `${agents}/article_boost`, { isActive: true })).statusCode, 200);
  const queued = await call('POST', `${agents}/article_boost/run`);
  t.equal(queued.statusCode, 202);
  const runId = queued.json().run.id as string;
  let run: { status: string; failureReason?: string } | undefined;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
    run = ((await call('GET', `${agents}/runs?agentKey=article_boost`)).json().runs as { id: string; status: string }[]).find((r) => r.id === runId);
    if (run?.status === 'succeeded' || run?.status === 'failed') break;
  }
  t.equal(run?.status, 'succeeded', `run by the worker process (${JSON.stringify(run)}), which saw the new site`);
});
