import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { OutboxMailer } from '../../src/adapters/mail/outboxMailer.ts';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqliteEventStore.ts';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { handleCommand } from '../../src/commands/handleCommand.ts';
import { conversationDecider, conversationStream } from '../../src/domain/conversation.ts';
import type { EventStore } from '../../src/ports/eventStore.ts';
import type { Mailer } from '../../src/ports/mailer.ts';
import type { ReadModelStore } from '../../src/ports/readModelStore.ts';
import { ReplySender } from '../../src/processors/agent/replySender.ts';
import type { RunningAgent } from '../../src/processors/agent/startAgentWorker.ts';
import { startAgentWorker } from '../../src/processors/agent/startAgentWorker.ts';
import { startForwardingMailbox } from '../../src/processors/forwardingMailbox.ts';
import nodemailer from 'nodemailer';
import { completion, fakeOpenAi, isTriageCall } from '../helpers/fakeOpenAi.ts';
import { makeAgentReady, ingest, PITCH } from '../ingestion/helpers.ts';
import { type Harness, type Receiver, startHarness, startReceiver } from '../webhooks/helpers.ts';
import { type SmtpSink, type SinkBehaviour, startSmtpSink } from './smtpSink.ts';

export interface AgentHarness {
  h: Harness;
  sink: SmtpSink;
  receiver: Receiver;
  secret: string;
  agent: RunningAgent | null;
  startAgent(): Promise<RunningAgent>;
  /** Ingests through the REST endpoint; returns the response body. */
  pitch(body?: Record<string, unknown>): Promise<{ conversationIds: string[]; aiPaused: boolean }>;
  /** Events of a conversation's own stream, by type. */
  conversationEvents(conversationId: string): Promise<Array<{ type: string; data: any }>>;
  /** Waits until the conversation's stream holds an event of `type`. */
  waitForEvent(conversationId: string, type: string, timeoutMs?: number): Promise<{ type: string; data: any }>;
  close(): Promise<void>;
}

/**
 * The real service (SQLite), the webhook worker posting to a real HTTPS receiver subscribed to the
 * agent's three event types, and the Outreach Agent sending through a real SMTP sink.
 */
export async function startAgentHarness(
  /** `ready: false`: the outreach agent stays inactive (the site's sending domain is verified either way). */
  options: { env?: Record<string, string>; sink?: SinkBehaviour; ready?: boolean; startAgent?: boolean } = {},
): Promise<AgentHarness> {
  const sink = await startSmtpSink(options.sink ?? {});
  const h = await startHarness({ env: { OUTBOUND_SMTP_URL: sink.url, AGENT_RETRY_BASE_MS: '50', AGENT_RETRY_FACTOR: '2', ...options.env } });
  if (options.ready ?? true) await makeAgentReady(h.app.services, h.tenant.siteId);
  // Agent off, but a person may still reply: mail leaves only from a verified sending domain.
  else await changeSiteSettings(h.app.services, { siteId: h.tenant.siteId, changes: { sendingDomainVerified: true } });
  const receiver = await startReceiver();
  const { secret } = await h.subscribe(receiver.url, ['outreach.reply_sent', 'outreach.conversation_status_changed', 'outreach.contact_suppressed']);
  const harness: AgentHarness = {
    h,
    sink,
    receiver,
    secret,
    agent: null,
    async startAgent() {
      harness.agent = await startAgentWorker(h.app.services);
      return harness.agent;
    },
    async pitch(body = {}) {
      const res = await ingest(h.app.fastify, h.tenant, { ...PITCH, ...body });
      if (res.statusCode !== 201) throw new Error(`ingestion failed: ${res.statusCode} ${res.body}`);
      return res.json();
    },
    async conversationEvents(conversationId) {
      return (await h.app.services.events.readStream(conversationStream(conversationId))).map((e) => ({ type: e.type, data: e.data as any }));
    },
    async waitForEvent(conversationId, type, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = (await harness.conversationEvents(conversationId)).find((e) => e.type === type);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no ${type} on conversation ${conversationId} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      await harness.agent?.stop();
      await receiver.close();
      await h.close();
      await sink.close();
    },
  };
  if (options.startAgent ?? true) await harness.startAgent();
  return harness;
}

/** The agent harness (MAIL_DOMAIN inbound.test), its forwarding mailbox on loopback and a real SMTP client of it; closed at the test's end. */
export async function startMailboxHarness(t: Test) {
  const a = await startAgentHarness({ env: { MAIL_DOMAIN: 'inbound.test' } });
  t.teardown(() => a.close());
  const { services } = a.h.app;
  const mailbox = await startForwardingMailbox(services, { host: '127.0.0.1', port: 0, mailDomain: 'inbound.test', maxMessageBytes: 1024 * 1024 });
  t.teardown(() => mailbox.close());
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: mailbox.port, secure: false, ignoreTLS: true });
  t.teardown(() => transport.close());
  return { a, services, mailbox, transport };
}

/** Webhook envelopes of one type the receiver got. */
export const envelopes = (receiver: Receiver, type: string) => receiver.received.filter((r) => r.json.type === type).map((r) => r.json);

/** Polls `probe` until it returns something other than undefined. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** An agent reply to p@prospect.test on conversation c1 (site s1, team t1), drafted and claimed by a worker that is gone (`gone/1`). */
export const GONE_WORKERS_DRAFT = {
  messageId: 'm-out', rfcMessageId: '<reply.m-out@example.com>', from: { name: null, address: 'outreach@example.com' }, to: { name: null, address: 'p@prospect.test' },
  subject: 'Re: x', bodyText: 'Yes', inReplyTo: null, references: [], returnPath: null, drafter: 'template-v1', draftSha256: 'ab',
};

/** Appends that claimed reply's stream (and `after`, e.g. a take-over), and starts a ReplySender that recovers it through `mailer`. */
export async function recoverGoneWorkersReply(events: EventStore, mailer: Mailer, after: Array<{ type: string; data: Record<string, unknown> }> = []) {
  const base = { conversationId: 'c1', siteId: 's1', teamId: 't1', occurredAt: 1_000 };
  await events.append(conversationStream('c1'), [
    { type: 'AgentTriaged', data: { ...base, dispatchId: 'd1', inboundMessageId: 'm-in', outcome: 'accept', classifier: 'offline-v1', reasons: [] }, metadata: {} },
    { type: 'ReplyDrafted', data: { ...base, ...GONE_WORKERS_DRAFT, dispatchId: 'd1', direction: 'outbound', senderType: 'agent', triage: 'accept' }, metadata: {} },
    { type: 'ReplySendAttempted', data: { ...base, messageId: 'm-out', attempt: 1 }, metadata: { workerInstance: 'gone/1' } },
    ...after.map((e) => ({ type: e.type, data: { ...base, ...e.data }, metadata: {} })),
  ], 'no_stream');
  const deps = { events, readModels: null as never, clock: { now: () => new Date() }, secrets: null as never, newId: () => 'x', fromLocalPart: 'outreach', mailDomain: 'mail.test', mailer };
  const sender = new ReplySender(deps, { maxAttempts: 3, baseMs: 1_000, factor: 1, orphanAfterMs: 0 }, { workerId: 'w', instanceId: 'w/1' });
  sender.track({ conversationId: 'c1', siteId: 's1', teamId: 't1', messageId: 'm-out', attempt: 1, inFlight: true, retryAt: null, startedBy: 'gone/1', startedAt: 0 });
  return sender;
}

/** An embedded event store and outbox in a temporary directory, closed and removed at the test's end. */
export function storeAndOutbox(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'recovery-'));
  const events = new SqliteEventStore(join(dir, 'events.sqlite'));
  const outbox = new OutboxMailer(join(dir, 'outbox.sqlite'));
  t.teardown(async () => {
    await events.close();
    await outbox.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { events, outbox };
}

/** A pitch with two asks: the offline extractor opens a conversation for each (test/agent/oneReplyPerPitch*). */
export const TWO_ASKS = {
  from: 'max@linkco.io',
  fromName: 'Max Linkco',
  subject: 'Two link ideas',
  bodyText: [
    'Hi, two link suggestions for your site:',
    '1. In https://example.test/a please link to https://linkco.io/one with anchor text "first tool"',
    '2. In https://example.test/b please link to https://linkco.io/two with anchor text "second tool"',
    'Thanks, Max',
  ].join('\n'),
};

/** The mails the harness's SMTP sink accepted for `address`. */
export const mailsTo = (a: AgentHarness, address: string) => a.sink.received.filter((m) => m.rcptTo.includes(address));

/** Each conversation's status changes, in order (`newStatus`). */
export const statusesOf = async (a: AgentHarness, ids: string[]) =>
  Promise.all(ids.map(async (id) => (await a.conversationEvents(id)).filter((e) => e.type === 'ConversationStatusChanged').map((e) => e.data.newStatus)));

/**
 * A conversation whose reply claim was left by an API process that died (no outcome recorded), then a
 * prospect's message on it: its dispatch must wait for the claim to be settled. The agent is stopped.
 */
export async function orphanedClaimThenReply(a: AgentHarness) {
  const id = (await a.pitch({ messageId: '<p1@prospect.io>' })).conversationIds[0]!;
  await a.waitForEvent(id, 'ConversationStatusChanged');
  const ourReply = a.sink.received[0]!.parsed.messageId!;
  await a.agent!.stop();
  a.agent = null;
  const s = a.h.app.services;
  const draftId = s.newId();
  await handleCommand(
    s,
    conversationStream(id),
    conversationDecider,
    {
      type: 'StartReply',
      data: {
        conversationId: id, siteId: a.h.tenant.siteId, teamId: a.h.tenant.teamId, now: Date.now(),
        draft: {
          messageId: draftId, rfcMessageId: `<reply.${draftId.toLowerCase()}@example.test>`, from: { name: 'x', address: 'outreach@example.test' }, to: { name: null, address: 'jane@prospect.io' },
          subject: 'Re: x', bodyText: 'hello', inReplyTo: null, references: [], returnPath: null, drafter: 'manual', draftSha256: '0'.repeat(64),
        },
      },
    },
    { workerInstance: 'api/dead-instance' },
  );
  await a.pitch({ subject: 'Re: x', bodyText: 'Thanks. What would you charge for keeping the link for two years?', messageId: '<p1b@prospect.io>', inReplyTo: ourReply });
  const decided = async () => (await a.conversationEvents(id)).filter((e) => e.type === 'AgentTriaged' || e.type === 'AgentSkipped').length;
  return { id, decided };
}

/** The agent worker's event store with `readStream` as `read` says, given the real one (our own port wrapped, not a client library). */
export function withReadStream(a: AgentHarness, read: (real: EventStore['readStream'], ...args: Parameters<EventStore['readStream']>) => ReturnType<EventStore['readStream']>): EventStore {
  const s = a.h.app.services;
  const background = s.events.offThreadAppends?.() ?? s.events;
  const events: EventStore = Object.create(background);
  events.offThreadAppends = () => events;
  events.readStream = (streamId, options) => read(background.readStream.bind(background), streamId, options);
  return events;
}

/** An agent worker's event store whose first read back of a stored dispatch (from its revision) fails. */
export function readBackFailsOnce(a: AgentHarness): { events: EventStore; failed(): number } {
  let failed = 0;
  const events = withReadStream(a, (real, streamId, options) => {
    if (failed === 0 && !streamId.startsWith('conversation-') && options?.fromRevision !== undefined) {
      failed++;
      return Promise.reject(new Error('SQLITE_BUSY: database is locked (injected)'));
    }
    return real(streamId, options);
  });
  return { events, failed: () => failed };
}

/**
 * `count` pitches for an agent with one lane and a model that takes 300 ms a triage, started and
 * stopped once its checkpoint passed them and its first triage began: most are stored, not decided.
 */
export async function stoppedWithDispatchesQueued(t: Test, count: number, tag: string): Promise<{ a: AgentHarness; ids: string[]; triageCalls(): number }> {
  const model = await fakeOpenAi(t);
  model.set(() => ({ status: 200, json: completion(JSON.stringify({ outcome: 'needs_human', reasons: ['test'] })), delayMs: 300 }));
  const a = await startAgentHarness({
    env: { AGENT_CONCURRENCY: '1', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: model.baseURL, OPENAI_TIMEOUT_MS: '20000' },
    startAgent: false,
  });
  t.teardown(() => a.close());
  const s = a.h.app.services;
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await a.pitch({ from: `${tag}${i}@prospect.test`, messageId: `<${tag}-${i}@prospect.test>` })).conversationIds[0]!);
  const head = await s.events.headPosition();
  await a.startAgent();
  // The ingestions asked the model for the links too.
  const triageCalls = () => model.seen.filter((call) => isTriageCall(call.body)).length;
  await waitFor('the first triage call', async () => (triageCalls() > 0 ? true : undefined), 10_000);
  await agentCheckpointReaches(s.readModels, head);
  await a.agent!.stop();
  a.agent = null;
  return { a, ids, triageCalls };
}

/** Waits until the agent worker's stored checkpoint has reached `position`. */
export function agentCheckpointReaches(readModels: ReadModelStore, position: bigint, timeoutMs = 10_000): Promise<true> {
  return waitFor('the agent checkpoint to reach the position', async () => (((await readModels.getCheckpoint('outreachAgent'))?.position ?? -1n) >= position ? true : undefined), timeoutMs);
}

/** Waits until the agent worker stores no dispatch (none waiting, none read and not decided). */
export function noDispatchStored(readModels: ReadModelStore, timeoutMs = 10_000): Promise<true> {
  return waitFor('no dispatch stored by the agent', async () => ((await readModels.find('outreachAgentDeferredDispatches', {})).length === 0 ? true : undefined), timeoutMs);
}
