import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { OutboxMailer } from '../../src/adapters/mail/outboxMailer.ts';
import { conversationStream } from '../../src/domain/conversation.ts';
import { startAgentWorker } from '../../src/processors/agent/startAgentWorker.ts';
import { ingest, makeAgentReady, PITCH } from '../ingestion/helpers.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { waitFor } from './helpers.ts';
import { startSmtpSink } from './smtpSink.ts';

const root = new URL('../../', import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/**
 * The agent runs as its own process (`outreach worker agent`). The SMTP sink kills it with SIGKILL
 * the moment it has the whole reply, before answering 250: the send happened, its record did not.
 * Restarted, the worker must not send the reply again; the outcome is unknown, so a person decides.
 */
t.test('SIGKILL between send and record, restart: the prospect gets the reply exactly once', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'agent-crash-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let worker: ChildProcess | null = null;
  const sink = await startSmtpSink({
    data: () => {
      worker?.kill('SIGKILL');
      return null;
    },
  });
  t.teardown(() => sink.close());
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', OUTBOUND_SMTP_URL: sink.url, AGENT_WORKER_ID: 'agent-a' };

  const app = await startTestApp({ dataDir, env: { ...env, RUN_AGENT: 'false' } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  await makeAgentReady(app.services, tenant.siteId);
  const res = await ingest(app.fastify, tenant, { ...PITCH, messageId: '<crash-1@prospect.io>' });
  t.equal(res.statusCode, 201);
  const conversationId: string = res.json().conversationIds[0];

  const start = () => {
    const child = spawn(process.execPath, ['bin/outreach.js', 'worker', 'agent'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.resume();
    return child;
  };
  const exited = (child: ChildProcess) => new Promise<string | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));

  worker = start();
  t.equal(await exited(worker), 'SIGKILL', 'the worker died inside the send');
  await waitFor('the sink to parse the reply', async () => (sink.received.length > 0 ? true : undefined), 5_000);
  t.equal(sink.received.length, 1, 'the sink has the reply');
  const before = (await app.services.events.readStream(conversationStream(conversationId))).map((e) => e.type);
  t.same(before, ['AgentTriaged', 'ReplyDrafted', 'ReplySendAttempted'], 'the attempt was claimed durably before the send; no outcome recorded');

  worker = start();
  t.teardown(() => worker?.kill('SIGKILL'));
  const changed = await waitFor('the status change', async () =>
    (await app.services.events.readStream(conversationStream(conversationId))).find((e) => e.type === 'ConversationStatusChanged'),
  );
  t.match(changed.data, { newStatus: 'awaiting_human', resolvedBy: 'agent', resolutionOutcome: 'send_failed' });
  const failed = (await app.services.events.readStream(conversationStream(conversationId))).find((e) => e.type === 'ReplySendFailed');
  t.match(failed?.data, { permanent: true, error: /outcome_unknown/ });
  await sleep(500);
  t.equal(sink.received.length, 1, 'never sent twice');
  worker.kill('SIGTERM');
  await exited(worker);
});

/**
 * Through the embedded outbox the same recovery resends: the outbox keeps one copy per Message-Id,
 * so a resend after a crash is harmless and the reply is recorded as sent.
 */
t.test('an attempt left in flight by a dead worker is resent through the idempotent outbox, stored once', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'agent-recover-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const app = await startTestApp({ dataDir, env: { LOG_LEVEL: 'silent', AGENT_WORKER_ID: 'agent-b' } });
  t.teardown(() => app.close());
  const services = app.services;
  const tenant = await createTenant(services);
  await makeAgentReady(services, tenant.siteId);
  const res = await ingest(app.fastify, tenant, { ...PITCH, messageId: '<recover-1@prospect.io>' });
  const conversationId: string = res.json().conversationIds[0];

  // A first worker sends into the outbox, then "dies": its claim and the stored mail stay, no record.
  const outbox = OutboxMailer.inDataDir(dataDir);
  t.teardown(() => outbox.close());
  let sends = 0;
  const dying = { name: 'outbox', idempotent: true, close: async () => {}, send: async (m: Parameters<OutboxMailer['send']>[0]) => {
    sends++;
    await outbox.send(m);
    return new Promise<never>(() => {}); // never answers: the process is gone
  } };
  const first = await startAgentWorker(services, undefined, { mailer: dying });
  await waitFor('the first send', async () => (sends > 0 ? true : undefined));
  void first.worker.stop().catch(() => {});

  const second = await startAgentWorker(services, undefined, { mailer: outbox });
  t.teardown(() => second.stop());
  const sent = await waitFor('ReplySent', async () => (await services.events.readStream(conversationStream(conversationId))).find((e) => e.type === 'ReplySent'));
  t.ok(sent);
  t.equal(outbox.listOutbox({ limit: 10 }).length, 1, 'one message in the outbox');
});
