import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { eventsOfType, ingest, makeAgentReady, PITCH } from '../ingestion/helpers.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { waitFor } from './helpers.ts';
import { startHoldingRelay } from './smtpSink.ts';

const root = new URL('../../', import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The SMTP mailer's pool (SmtpMailer's default maxConnections). */
const POOL = 5;
const PITCHES = 12;

/**
 * Through SMTP the agent claims a reply's attempt only once one of the pool's connections is free
 * for it. The relay holds every message it is given without answering; the worker, with 12 accepted
 * pitches to answer and 16 triage lanes, has claimed only as many attempts as the pool sends at once
 * when it is killed. Restarted with the relay answering, those few are `outcome_unknown` (a person
 * checks) and every other reply is sent, each message given to the relay once.
 */
t.test('SIGKILL with replies queued for the SMTP pool: only the attempts on a connection are left unknown', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'agent-slots-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const relay = await startHoldingRelay(); // held ones never get their 250: the worker dies first
  t.teardown(() => relay.close());
  const env = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    OUTBOUND_SMTP_URL: relay.url,
    AGENT_WORKER_ID: 'agent-slots',
    AGENT_CONCURRENCY: '16',
  };

  const app = await startTestApp({ dataDir, env: { ...env, RUN_AGENT: 'false' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  await makeAgentReady(app.services, tenant.siteId);
  for (let i = 0; i < PITCHES; i++) {
    const res = await ingest(app.fastify, tenant, { ...PITCH, from: `jane${i}@prospect${i}.io`, messageId: `<slots-${i}@prospect${i}.io>` });
    t.equal(res.statusCode, 201);
  }

  const start = () => {
    const child = spawn(process.execPath, ['bin/outreach.js', 'worker', 'agent'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.resume();
    return child;
  };
  const exited = (child: ChildProcess) => new Promise<string | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));

  let worker = start();
  t.teardown(() => worker.kill('SIGKILL'));
  await waitFor('every pitch triaged', async () => ((await eventsOfType(app.services, 'AgentTriaged')).length === PITCHES ? true : undefined), 30_000);
  await waitFor('the pool busy', async () => (relay.handed.length >= POOL ? true : undefined), 15_000);
  await sleep(500); // time for any other lane to claim, were it allowed to
  const claimed = (await eventsOfType(app.services, 'ReplySendAttempted')).length;
  t.equal((await eventsOfType(app.services, 'ReplyDrafted')).length, PITCHES, 'every reply drafted');
  t.equal(claimed, POOL, 'an attempt is claimed for each connection only, not for every drafted reply');
  t.equal(relay.handed.length, POOL);
  worker.kill('SIGKILL');
  t.equal(await exited(worker), 'SIGKILL');

  relay.holding = false;
  worker = start();
  const outcomes = await waitFor(
    'an outcome for every reply',
    async () => {
      const sent = await eventsOfType(app.services, 'ReplySent');
      const failed = await eventsOfType(app.services, 'ReplySendFailed');
      return sent.length + failed.length === PITCHES ? { sent, failed } : undefined;
    },
    30_000,
  );
  t.equal(outcomes.failed.length, POOL, 'the attempts the worker died in are not sent again');
  for (const f of outcomes.failed) t.match(f.data, { permanent: true, error: /^outcome_unknown/ });
  t.equal(outcomes.sent.length, PITCHES - POOL, 'every reply that had not gone out is sent after the restart');
  await sleep(300);
  t.equal(relay.handed.length, PITCHES, 'the relay was given each reply once');
  t.equal(new Set(relay.handed).size, PITCHES);
  worker.kill('SIGTERM');
  await exited(worker);
});
