import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { agentRunStream } from '../../src/domain/agentRun.ts';
import { startAgentRunner } from '../../src/processors/agentRuns/startAgentRunner.ts';
import { getAgentRun } from '../../src/readModels/agentRuns.ts';
import { settle } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { agentsPath, testAgentWork } from './helpers.ts';

const root = new URL('../../', import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A local HTTP server the hanging work calls when it has started: the moment to SIGKILL its process. */
async function startSignal() {
  const started: string[] = [];
  const waiters: Array<() => void> = [];
  const server = createServer((req, res) => {
    started.push(new URL(req.url!, 'http://x').searchParams.get('run') ?? '');
    res.end('ok');
    waiters.splice(0).forEach((w) => w());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/started`,
    started,
    next: (count: number, timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the work never started')), timeoutMs);
        const check = () => (started.length >= count ? (clearTimeout(timer), resolve()) : waiters.push(check));
        check();
      }),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** `leaseMs`: short where a test waits for a lease to run out; long where the run must stay held on a loaded machine. */
async function setup(t: Test, leaseMs = 1500) {
  const dataDir = mkdtempSync(join(tmpdir(), 'runner-crash-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const signal = await startSignal();
  t.teardown(() => signal.close());
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', AGENT_RUN_LEASE_MS: String(leaseMs), AGENT_SCHEDULE_INTERVAL_MS: '60000', SIGNAL_URL: signal.url };
  const app = await startTestApp({ dataDir, env, agentWork: testAgentWork() });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  await app.fastify.inject({ method: 'PUT', url: `/api/v1/sites/${tenant.siteId}/articles`, headers: bearer(tenant.key), payload: { url: 'https://example.test/a', title: 'A', text: 'One article.' } });
  const activated = await app.fastify.inject({ method: 'PUT', url: `${agentsPath(tenant.siteId)}/article_boost`, headers: bearer(tenant.key), payload: { isActive: true } });
  t.equal(activated.statusCode, 200);
  const children: ChildProcess[] = [];
  t.teardown(() => children.forEach((c) => c.kill('SIGKILL')));
  const startChild = (mode: 'hang' | 'stoppable' | 'ok', workerId: string) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/agentRunnerProcess.ts'], {
      cwd: root,
      env: { ...process.env, ...env, WORK_MODE: mode, AGENT_RUNNER_WORKER_ID: workerId },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.resume();
    children.push(child);
    return child;
  };
  const killed = (child: ChildProcess) =>
    new Promise<string | null>((resolve) => {
      child.once('exit', (_code, sig) => resolve(sig));
      child.kill('SIGKILL');
    });
  const stopped = (child: ChildProcess) =>
    new Promise<number | null>((resolve) => {
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  const runNow = async () => {
    const res = await app.fastify.inject({ method: 'POST', url: `${agentsPath(tenant.siteId)}/article_boost/run`, headers: bearer(tenant.key) });
    t.equal(res.statusCode, 202);
    return res.json().run.id as string;
  };
  const ended = async (runId: string, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await settle(app.services);
      const run = await getAgentRun(app.services.readModels, runId);
      if (run && (run.status === 'succeeded' || run.status === 'failed')) return run;
      if (Date.now() > deadline) throw new Error(`run ${runId} stuck in ${run?.status}`);
      await sleep(100);
    }
  };
  return { app, signal, startChild, killed, stopped, runNow, ended };
}

t.test('runner SIGKILLed mid-run, another started: the run is taken over and succeeds on attempt 2', async (t) => {
  const { app, signal, startChild, killed, runNow, ended } = await setup(t);
  const runId = await runNow();
  const first = startChild('hang', 'runner-1');
  await signal.next(1);
  t.equal(await killed(first), 'SIGKILL', 'the runner died inside the work');
  await settle(app.services);
  t.match(await getAgentRun(app.services.readModels, runId), { status: 'running', attempt: 1, workerId: /^runner-1\// }, 'left running by the dead worker');

  startChild('ok', 'runner-2');
  const run = await ended(runId);
  t.match(run, { status: 'succeeded', attempt: 2, workerId: /^runner-2\//, counts: { articlesRead: 1 } });
  const types = (await app.services.events.readStream(agentRunStream(runId))).map((e) => e.type).filter((x) => x !== 'AgentRunLeaseRenewed');
  t.same(types, ['AgentRunStarted', 'AgentRunStarted', 'AgentRunSucceeded']);
});

t.test('killed on both attempts: the run ends failed (worker_lost), never stuck', async (t) => {
  const { app, signal, startChild, killed, runNow, ended } = await setup(t);
  const runId = await runNow();
  const first = startChild('hang', 'runner-1');
  await signal.next(1);
  t.equal(await killed(first), 'SIGKILL');
  const second = startChild('hang', 'runner-2');
  await signal.next(2);
  t.equal(await killed(second), 'SIGKILL', 'the retry died too');
  t.same(signal.started, [runId, runId], 'the same run, started twice');

  const third = await startAgentRunner(app.services, undefined, { agentWork: testAgentWork(), workerId: 'runner-3' });
  t.teardown(() => third.stop());
  const run = await ended(runId);
  t.match(run, { status: 'failed', attempt: 2, failureReason: 'worker_lost', failureDetail: /runner-2/ });
});

t.test('runner stopped (SIGTERM) mid-run twice, as two deploys: the run is given back each time, then succeeds', async (t) => {
  // A release after the lease ran out gives nothing back (that attempt counts as lost): with 1.5 s,
  // a renewal late on a loaded machine (the CI's parallel test files) made the second stop release nothing.
  const { app, signal, startChild, stopped, runNow, ended } = await setup(t, 5_000);
  const runId = await runNow();
  for (const [i, workerId] of ['runner-1', 'runner-2'].entries()) {
    const child = startChild('stoppable', workerId);
    await signal.next(i + 1);
    t.equal(await stopped(child), 0, `${workerId} shut down`);
    await settle(app.services);
    t.match(await getAgentRun(app.services.readModels, runId), { status: 'queued', attempt: i + 1, workerId: null, leaseExpiresAt: null }, 'queued again at once');
  }
  startChild('ok', 'runner-3');
  const run = await ended(runId);
  t.match(run, { status: 'succeeded', attempt: 3, workerId: /^runner-3\//, counts: { articlesRead: 1 } }, 'not worker_lost: no attempt was lost');
  const types = (await app.services.events.readStream(agentRunStream(runId))).map((e) => e.type).filter((x) => x !== 'AgentRunLeaseRenewed');
  t.same(types, ['AgentRunStarted', 'AgentRunReleased', 'AgentRunStarted', 'AgentRunReleased', 'AgentRunStarted', 'AgentRunSucceeded']);
});
