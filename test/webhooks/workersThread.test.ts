import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import t from 'tap';
import { conversationStream } from '../../src/domain/conversation.ts';
import { startBackgroundRoles } from '../../src/processors/startBackgroundRoles.ts';
import { type TestApp, bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { PITCH, ingest, makeAgentReady } from '../ingestion/helpers.ts';
import { startSmtpSink } from '../agent/smtpSink.ts';
import { independentlyVerify, sleep, startReceiver, testCertificate } from './helpers.ts';
import { canCountHandles, handlesTo } from '../helpers/openHandles.ts';

/**
 * `npm start`'s layout (WORKERS_IN_THREAD, default true): the webhook delivery worker and the
 * Outreach Agent run in their own worker thread, with their own connections, and follow the
 * projection thread through the API thread. An ingestion answered on the API thread is triaged,
 * answered by mail and announced by signed webhooks from the thread; a subscription created after
 * the thread started reaches it; stopped and started again, the roles resume from their checkpoints.
 */
/** Creates a webhook subscription through the REST route, as a client would. */
function subscribe(app: TestApp, tenant: { siteId: string; key: string }, payload: { label: string; url: string; eventTypes: string[] }) {
  return app.fastify.inject({ method: 'POST', url: `/api/v1/sites/${tenant.siteId}/outreach/webhooks`, headers: bearer(tenant.key), payload });
}

t.test('the webhook worker and the agent in their own thread: ingestion → agent reply → signed webhooks, then resume after a restart', async (t) => {
  const { caFile } = await testCertificate();
  const sink = await startSmtpSink({});
  t.teardown(() => sink.close());
  const app = await startTestApp({
    projectionsInThread: true,
    env: {
      WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
      WEBHOOK_EXTRA_CA_FILE: caFile,
      WEBHOOK_RETRY_BASE_MS: '30',
      WEBHOOK_RETRY_FACTOR: '2',
      OUTBOUND_SMTP_URL: sink.url,
      AGENT_RETRY_BASE_MS: '50',
      AGENT_RETRY_FACTOR: '2',
    },
  });
  t.teardown(() => app.close());
  t.equal(app.config.WORKERS_IN_THREAD, true, 'on by default');
  const tenant = await createTenant(app.services);
  await makeAgentReady(app.services, tenant.siteId);

  const attempts: string[] = [];
  const errors: unknown[] = [];
  const log = { error: (obj: unknown, msg?: string) => errors.push([msg, obj]), warn: () => {} };
  let roles = await startBackgroundRoles(app.services, app.projections, { log, onAttempt: (status) => attempts.push(status) });
  t.equal(roles.mode, 'thread');

  // Subscribed after the thread started: the subscription reaches the thread's read models by relay.
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const sub = await subscribe(app, tenant, { label: 'thread', url: receiver.url, eventTypes: ['outreach.message_received', 'outreach.reply_sent', 'outreach.conversation_status_changed'] });
  t.equal(sub.statusCode, 201);
  const secret = sub.json().secret as string;

  const res = await ingest(app.fastify, tenant, { ...PITCH, messageId: '<thread-1@prospect.io>' });
  t.equal(res.statusCode, 201);
  const conversationId = (res.json() as { conversationIds: string[] }).conversationIds[0]!;
  // Read-your-writes on the API thread is unchanged: the conversation is readable at once.
  const read = await app.fastify.inject({ url: `/api/v1/sites/${tenant.siteId}/outreach/conversations/${conversationId}`, headers: bearer(tenant.key) });
  t.equal(read.statusCode, 200, 'the ingestion is readable when it is answered');

  await receiver.waitFor((r) => r.some((x) => x.json.type === 'outreach.message_received'), 20_000);
  await receiver.waitFor((r) => r.some((x) => x.json.type === 'outreach.reply_sent'), 20_000);
  await receiver.waitFor((r) => r.some((x) => x.json.type === 'outreach.conversation_status_changed'), 20_000);
  t.equal(sink.received.length, 1, 'the agent in the thread sent exactly one reply');
  const events = (await app.services.events.readStream(conversationStream(conversationId))).map((e) => e.type);
  t.same(events, ['AgentTriaged', 'ReplyDrafted', 'ReplySendAttempted', 'ReplySent', 'ConversationStatusChanged'], "the agent's decisions are events on the conversation");
  for (const r of receiver.received) t.ok(independentlyVerify(r, secret), `${r.json.type} is signed with the subscription's secret`);
  // The agent's appends (made in the thread) reach the API thread's read models too.
  const head = await app.services.events.headPosition();
  t.ok(await app.services.projections.waitFor(head, 10_000), "the thread's appends reach the API thread's projections");

  // What /metrics reads: attempts counted on the API thread, positions reported by the thread.
  const deadline = Date.now() + 10_000;
  while ((!attempts.includes('ok') || roles.sources.webhooks!.position <= 0n || roles.sources.agent!.position <= 0n) && Date.now() < deadline) await sleep(50);
  t.ok(attempts.includes('ok'), 'delivery attempts reach the metrics hook');
  t.ok(roles.sources.webhooks!.position > 0n, "the dispatcher's checkpoint is reported");
  t.ok(roles.sources.agent!.position > 0n, "the agent's checkpoint is reported");

  // Stopped, an ingestion meanwhile, started again: the new thread resumes from the stored checkpoints.
  for (const role of roles.roles) await role.stop(2_000);
  const before = receiver.received.length;
  const second = await ingest(app.fastify, tenant, { ...PITCH, from: 'second@prospect.io', messageId: '<thread-2@prospect.io>' });
  t.equal(second.statusCode, 201);
  await sleep(300);
  t.equal(receiver.received.length, before, 'nothing is delivered while the roles are stopped');
  roles = await startBackgroundRoles(app.services, app.projections, { log, onAttempt: (status) => attempts.push(status) });
  await receiver.waitFor((r) => r.filter((x) => x.json.type === 'outreach.reply_sent').length === 2, 20_000);
  t.equal(sink.received.length, 2, 'the second pitch is answered once after the restart');
  const ids = receiver.received.map((r) => String(r.json.id));
  t.equal(new Set(ids).size, ids.length, 'no event was delivered twice across the graceful restart (queued records are written at the stop)');
  for (const role of roles.roles) await role.stop(2_000);
  t.same(errors, [], 'no role reported an error');
});

t.test("the API thread's writer thread replaced: the roles' thread appends through the new one, one writer per process again", { skip: !canCountHandles && 'needs /proc' }, async (t) => {
  const { caFile } = await testCertificate();
  const app = await startTestApp({ projectionsInThread: true, env: { WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8', WEBHOOK_EXTRA_CA_FILE: caFile } });
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const errors: unknown[] = [];
  const log = { error: (obj: unknown, msg?: string) => errors.push([msg, obj]), warn: () => {} };
  const roles = await startBackgroundRoles(app.services, app.projections, { log });
  t.teardown(async () => {
    for (const role of roles.roles) await role.stop(2_000);
  });
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const sub = await subscribe(app, tenant, { label: 'writer', url: receiver.url, eventTypes: ['outreach.message_received'] });
  t.equal(sub.statusCode, 201);
  const received = (n: number) => receiver.waitFor((r) => r.filter((x) => x.json.type === 'outreach.message_received').length >= n, 20_000);
  const pitch = (n: number) => ingest(app.fastify, tenant, { ...PITCH, from: `writer${n}@prospect.io`, messageId: `<writer-${n}@prospect.io>` });

  t.equal((await pitch(1)).statusCode, 201);
  await received(1);
  await sleep(200); // the delivery's record is written
  const file = join(app.config.DATA_DIR, 'events.sqlite');
  const before = handlesTo(file);

  // The API thread's writer thread dies (the store's own field: no public way to kill it).
  await (app.services.events as unknown as { writer: Worker }).writer.terminate();
  await sleep(50);
  t.equal((await pitch(2)).statusCode, 201, 'the API thread starts a new writer thread');
  await received(2);
  t.equal((await pitch(3)).statusCode, 201);
  await received(3);
  await sleep(300);
  t.equal(handlesTo(file), before, "as many connections to the log as before: the roles' thread has no writer of its own");
  t.same(errors, [], 'no role reported an error');
});
