import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import t, { type Test } from 'tap';
import { claimWorkerIdentity } from '../../src/adapters/sqlite/workerIdentity.ts';
import { conversationStream } from '../../src/domain/conversation.ts';
import { startAgentWorker } from '../../src/processors/agent/startAgentWorker.ts';
import { startWebhookWorker } from '../../src/processors/webhookDelivery/startWorker.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, ingest, makeAgentReady } from '../ingestion/helpers.ts';
import { messageReceived, sleep, startSubscribedApp, testCertificate } from './helpers.ts';

/**
 * Several delivery (or agent) workers on one host, none given a worker id: each runs under its own
 * name. A worker resumes at once what is recorded under its name, as its own previous run's work, so
 * two running workers sharing one name would both send it.
 */
t.setTimeout(180_000);

const root = new URL('../../', import.meta.url).pathname;
const host = hostname();

/** The service with a subscription to a local HTTPS receiver whose first answer is a 500; `env` as the workers get it. */
async function webhookApp(t: Test, settings: Record<string, string>) {
  const { caFile } = await testCertificate();
  const env = { WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8', WEBHOOK_EXTRA_CA_FILE: caFile, WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_RETRY_JITTER: '0', ...settings };
  return { ...(await startSubscribedApp(t, env, (_r, n) => (n === 1 ? 500 : 200), 'names')), env };
}

t.test('a second delivery worker started beside a running one does not take over its pending retry', async (t) => {
  // The retry is due 1.5 s after the failed attempt; another worker's retries are taken over only after an hour.
  const { app, tenant, receiver } = await webhookApp(t, { WEBHOOK_RETRY_BASE_MS: '1500', WEBHOOK_ORPHAN_AFTER_MS: '3600000' });

  const first = await startWebhookWorker(app.services);
  let second: Awaited<ReturnType<typeof startWebhookWorker>> | null = null;
  t.teardown(async () => {
    await second?.stop();
    await first.stop();
  });
  t.equal(first.workerId, host, 'the first worker is named after the host');

  await app.services.events.append('test-worker-names', [messageReceived(tenant, 1)], 'any');
  await receiver.waitFor((r) => r.length >= 1, 30_000);
  // The retry is queued once the failed attempt's record is written.
  for (const deadline = Date.now() + 10_000; first.queue.waitingForRetry === 0 && Date.now() < deadline; ) await sleep(10);
  t.equal(first.queue.waitingForRetry, 1, 'the first worker holds the retry');
  t.equal(receiver.received.length, 1, 'and has not sent it yet');

  second = await startWebhookWorker(app.services);
  t.equal(second.workerId, `${host}#2`, 'the second worker gets a name of its own');
  t.equal(second.queue.held, 0, 'and does not hold the first worker’s retry');

  await receiver.waitFor((r) => r.length >= 2, 30_000);
  await sleep(1_000);
  t.equal(receiver.received.length, 2, 'the failed attempt and one retry: the retry is not sent twice');
  t.equal(receiver.received[0]!.json.id, receiver.received[1]!.json.id, 'both POSTs are the same delivery');

  // A stopped worker's name is free again, for the next worker that starts.
  await first.stop();
  const third = await startWebhookWorker(app.services);
  t.teardown(() => third.stop());
  t.equal(third.workerId, host, 'a stopped worker’s name goes to the next one');
});

t.test('a worker process that dies frees its name: the next worker takes it and resumes its retries at once', async (t) => {
  const { app, tenant, receiver, env } = await webhookApp(t, { LOG_LEVEL: 'silent', WEBHOOK_RETRY_BASE_MS: '2000', WEBHOOK_ORPHAN_AFTER_MS: '3600000' });

  const child = spawn(process.execPath, ['bin/outreach.js', '--json', 'worker', 'webhooks'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: app.dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk));
  const started = await new Promise<{ workerId: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker did not start in 60 s:\n${err}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.includes('"started"'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      }
    });
  });
  t.equal(started.workerId, host, 'the worker process prints its name: the host name');

  const beside = claimWorkerIdentity(app.dataDir, 'webhooks');
  t.equal(beside.workerId, `${host}#2`, 'taken while the process runs: the next name');
  beside.release();

  await app.services.events.append('test-worker-names', [messageReceived(tenant, 1)], 'any');
  await receiver.waitFor((r) => r.length >= 1, 30_000);
  await sleep(300); // the failed attempt's record is durable
  child.kill('SIGKILL');
  await exited;

  const next = await startWebhookWorker(app.services);
  t.teardown(() => next.stop());
  t.equal(next.workerId, host, 'after the crash the name is free again');
  await receiver.waitFor((r) => r.length >= 2, 15_000);
  t.equal(receiver.received[1]!.json.id, receiver.received[0]!.json.id, 'the dead worker’s retry is sent by the one that took its name, without the hour-long orphan wait');
});

t.test('agent workers on one host get names of their own; a configured AGENT_WORKER_ID is used as given', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const a = await startAgentWorker(app.services);
  const b = await startAgentWorker(app.services);
  t.equal(a.worker.workerId, host);
  t.equal(b.worker.workerId, `${host}#2`);
  await a.stop();
  const c = await startAgentWorker(app.services);
  t.equal(c.worker.workerId, host, 'a stopped worker’s name goes to the next one');
  await Promise.all([b.stop(), c.stop()]);

  const named = await startTestApp({ env: { AGENT_WORKER_ID: 'agent-7' } });
  t.teardown(() => named.close());
  const d = await startAgentWorker(named.services);
  const e = await startAgentWorker(named.services);
  t.equal(d.worker.workerId, 'agent-7');
  t.equal(e.worker.workerId, 'agent-7', 'an operator-given id is not changed (each copy must be given its own)');
  await Promise.all([d.stop(), e.stop()]);
});

t.test('an agent worker started beside a running one leaves that one’s reply in flight alone', async (t) => {
  // Another worker's reply left in flight is settled only after an hour (AGENT_ORPHAN_AFTER_MS).
  const app = await startTestApp({ env: { AGENT_ORPHAN_AFTER_MS: '3600000' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  await makeAgentReady(app.services, tenant.siteId);
  const res = await ingest(app.fastify, tenant, { ...PITCH, messageId: '<names-1@prospect.io>' });
  const conversationId: string = res.json().conversationIds[0];

  // A relay that is still working on the reply (SMTP: not idempotent, so a reply whose send was cut
  // short is recorded as outcome unknown, for a person, rather than sent again).
  let sends = 0;
  const slowRelay = { name: 'smtp', idempotent: false, close: async () => {}, send: async () => {
    sends++;
    return new Promise<never>(() => {});
  } };
  const first = await startAgentWorker(app.services, undefined, { mailer: slowRelay });
  t.teardown(() => void first.worker.stop().catch(() => {}));
  for (const deadline = Date.now() + 20_000; sends === 0; await sleep(25)) if (Date.now() > deadline) throw new Error('the reply was never sent');

  const second = await startAgentWorker(app.services, undefined, { mailer: slowRelay });
  t.teardown(() => second.stop());
  t.equal(second.worker.workerId, `${host}#2`);
  await sleep(1_500);
  const history = JSON.stringify((await app.services.events.readStream(conversationStream(conversationId))).map((e) => e.data));
  t.notMatch(history, /outcome_unknown/, 'the running worker’s send is not declared lost by the newcomer');
  t.equal(sends, 1, 'nor sent again');
});

t.test('a name taken twice in one process stays locked for other processes', async (t) => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { spawnSync } = await import('node:child_process');
  const dir = mkdtempSync(join(tmpdir(), 'worker-names-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const module = new URL('../../src/adapters/sqlite/workerIdentity.ts', import.meta.url).href;
  const claimInChild = () => {
    const code = `const { claimWorkerIdentity } = await import(${JSON.stringify(module)}); console.log(claimWorkerIdentity(${JSON.stringify(dir)}, 'webhooks', 'h').workerId);`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' });
    if (child.status !== 0) throw new Error(child.stderr);
    return child.stdout.trim();
  };
  const a = claimWorkerIdentity(dir, 'webhooks', 'h');
  t.equal(claimInChild(), 'h#2', 'another process, while this one holds h');
  const b = claimWorkerIdentity(dir, 'webhooks', 'h');
  t.equal(b.workerId, 'h#2');
  t.equal(claimInChild(), 'h#3', 'another process, after this one took a second name: h and h#2 are both still held');
  a.release();
  b.release();
});

t.test('names are per role, and not shared with a worker of another data directory', async (t) => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'worker-names-'));
  const other = mkdtempSync(join(tmpdir(), 'worker-names-'));
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  });
  const held = [claimWorkerIdentity(dir, 'webhooks', 'h'), claimWorkerIdentity(dir, 'webhooks', 'h'), claimWorkerIdentity(dir, 'agent', 'h'), claimWorkerIdentity(other, 'webhooks', 'h')];
  t.same(held.map((i) => i.workerId), ['h', 'h#2', 'h', 'h']);
  held[0]!.release();
  held[0]!.release(); // releasing twice is harmless
  const again = claimWorkerIdentity(dir, 'webhooks', 'h');
  t.equal(again.workerId, 'h', 'the lowest free name');
  for (const i of [...held, again]) i.release();
});
