import t from 'tap';
import { createDrafter } from '../../src/adapters/drafting/createDrafter.ts';
import { createTriage } from '../../src/adapters/triage/createTriage.ts';
import { conversationStream } from '../../src/domain/conversation.ts';
import type { EventStore, ReadAllOptions, RecordedEvent } from '../../src/ports/eventStore.ts';
import { OutreachAgentWorker } from '../../src/processors/agent/outreachAgentWorker.ts';
import { agentOptionsFrom } from '../../src/processors/agent/startAgentWorker.ts';
import { bearer } from '../helpers/testApp.ts';
import { act } from '../inbox/actionsHelpers.ts';
import { GONE_WORKERS_DRAFT, agentCheckpointReaches, envelopes, noDispatchStored, orphanedClaimThenReply, recoverGoneWorkersReply, startAgentHarness, storeAndOutbox, waitFor } from './helpers.ts';

/** A person's decision wins over the agent's: what the agent has not sent yet, it does not send. */

const failOnce = () => {
  let tries = 0;
  return { data: () => (++tries <= 1 ? { code: 451, message: '4.3.0 try again later' } : null) };
};

for (const [action, body] of [
  ['takeover', undefined],
  ['status', { status: 'declined' }],
] as const) {
  t.test(`${action === 'takeover' ? 'a take-over' : 'a decline'} withdraws the agent's reply waiting for its retry`, async (t) => {
    const a = await startAgentHarness({ env: { AGENT_RETRY_BASE_MS: '800', AGENT_RETRY_FACTOR: '1' }, sink: failOnce() });
    t.teardown(() => a.close());
    const id = (await a.pitch()).conversationIds[0]!;
    await a.waitForEvent(id, 'ReplySendFailed');
    const res = await act(a.h.app.fastify, a.h.tenant, id, action, body);
    t.equal(res.statusCode, 200, res.body);
    const events = await a.conversationEvents(id);
    const withdrawn = events.filter((e) => e.type === 'ReplySendFailed').at(-1)!;
    t.match(withdrawn.data, { retryAt: null, permanent: true, error: /^withdrawn: a person/ }, 'recorded with the person’s action');
    // Well past the retry's due time: nothing goes out, nothing more is recorded.
    await new Promise((r) => setTimeout(r, 1_600));
    t.equal(a.sink.received.length, 0, 'no mail after the person acted');
    const after = (await a.conversationEvents(id)).map((e) => e.type);
    t.notOk(after.includes('ReplySent'), after.join(','));
    t.notOk(after.slice(events.length).includes('ReplySendAttempted'), 'no attempt after the withdrawal');
    t.same(envelopes(a.receiver, 'outreach.reply_sent'), []);
    const message = await a.h.app.fastify.inject({ method: 'GET', url: `/api/v1/sites/${a.h.tenant.siteId}/outreach/conversations/${id}`, headers: bearer(a.h.tenant.key) });
    t.equal(message.statusCode, 200);
  });
}

t.test('a reply in flight when a person takes over: sent, not auto-resolved, and a failure is not retried', async (t) => {
  const s = await import('../../src/domain/conversation.ts');
  const base = { conversationId: 'c1', siteId: 's1', teamId: 't1', occurredAt: 1_000 };
  const draft = GONE_WORKERS_DRAFT;
  const history: import('../../src/domain/conversation.ts').ConversationEvent[] = [
    { type: 'AgentTriaged', data: { ...base, dispatchId: 'd1', inboundMessageId: 'm-in', outcome: 'accept', classifier: 'offline-v1', reasons: [] } },
    { type: 'ReplyDrafted', data: { ...base, ...draft, dispatchId: 'd1', direction: 'outbound', senderType: 'agent', triage: 'accept' } },
    { type: 'ReplySendAttempted', data: { ...base, messageId: 'm-out', attempt: 1 } },
    { type: 'ConversationTakenOver', data: { ...base, by: 'u1' } },
  ];
  const state = history.reduce(s.conversationDecider.evolve, s.conversationDecider.initialState());
  const ref = { conversationId: 'c1', siteId: 's1', teamId: 't1', now: 1_000 };
  const ok = s.conversationDecider.decide({ type: 'RecordSendResult', data: { ...ref, messageId: 'm-out', attempt: 1, result: { ok: true, mailProviderMessageId: 'Q1' } } }, state);
  t.same(ok.map((e) => e.type), ['ReplySent'], 'no status change by the agent');
  t.equal((ok[0]!.data as { autoResolved: boolean }).autoResolved, false);
  const failed = s.conversationDecider.decide(
    { type: 'RecordSendResult', data: { ...ref, messageId: 'm-out', attempt: 1, result: { ok: false, error: 'ECONNRESET', permanent: false, retryAt: 9_000 } } },
    state,
  );
  t.same(failed.map((e) => e.type), ['ReplySendFailed'], 'no awaiting_human by the agent: the person has it');
  t.match(failed[0]!.data, { retryAt: null, error: /^ECONNRESET; withdrawn: a person took the conversation over$/ });
});

for (const status of ['declined', 'resolved'] as const) {
  t.test(`a person sets ${status} before the agent reached the pitch: the agent skips it`, async (t) => {
    const a = await startAgentHarness({ startAgent: false });
    t.teardown(() => a.close());
    const id = (await a.pitch()).conversationIds[0]!;
    t.equal((await act(a.h.app.fastify, a.h.tenant, id, 'status', { status })).statusCode, 200);
    await a.startAgent();
    const skipped = await a.waitForEvent(id, 'AgentSkipped');
    t.equal(skipped.data.reason, 'closed_by_user');
    const types = (await a.conversationEvents(id)).map((e) => e.type);
    t.same(types, ['ConversationStatusChanged', 'AgentSkipped'], 'not reopened, not triaged');
    t.equal(a.sink.received.length, 0, 'no reply to a pitch a person closed');
    t.same(envelopes(a.receiver, 'outreach.reply_sent'), []);
  });
}


t.test('a claim whose sender died does not stop the agent: the dispatch waits, the others go on', async (t) => {
  const a = await startAgentHarness({ env: { AGENT_ORPHAN_AFTER_MS: '1000' } });
  t.teardown(() => a.close());
  const { id, decided } = await orphanedClaimThenReply(a);
  const s = a.h.app.services;
  const otherId = (await a.pitch({ from: 'bob@other.io', messageId: '<p2@other.io>' })).conversationIds[0]!;
  await a.startAgent();

  await a.waitForEvent(otherId, 'AgentTriaged');
  // The orphaned claim is recovered after AGENT_ORPHAN_AFTER_MS, then the waiting dispatch is decided.
  const failed = await a.waitForEvent(id, 'ReplySendFailed');
  t.match(failed.data.error, /outcome_unknown/);
  await waitFor('the waiting dispatch to be decided', async () => ((await decided()) === 2 ? true : undefined), 10_000);
  const head = await s.events.headPosition();
  await agentCheckpointReaches(s.readModels, head);
  // A decision's removal is stored with the next page, or within a second while the log is idle.
  await noDispatchStored(s.readModels, 5_000);
  t.pass('nothing left deferred');
});

/** Global positions as EventStoreDB has them: sparse (byte offsets), and a read from one that is no event's fails. */
function sparsePositions(real: EventStore): EventStore {
  const store: EventStore = Object.create(real);
  const out = (e: RecordedEvent): RecordedEvent => ({ ...e, position: e.position * 10n });
  const inner = (p: bigint) => {
    if (p < 0n) return p;
    if (p % 10n !== 0n) throw new Error(`InvalidPosition: ${p} is inside a log record`);
    return p / 10n;
  };
  store.readAll = async (options: ReadAllOptions = {}) => (await real.readAll({ ...options, after: inner(options.after ?? -1n) })).map(out);
  store.readStream = async (id, options) => (await real.readStream(id, options)).map(out);
  store.waitForNew = (after, ms, signal) => real.waitForNew(inner(after), ms, signal);
  store.headPosition = async () => (await real.headPosition()) * 10n;
  store.append = async (id, events, expected) => {
    const r = await real.append(id, events, expected);
    return { ...r, position: r.position * 10n };
  };
  return store;
}

t.test('a deferred dispatch is read back by its stream, not its global position (EventStoreDB)', async (t) => {
  const a = await startAgentHarness({ env: { AGENT_ORPHAN_AFTER_MS: '1000' } });
  t.teardown(() => a.close());
  const { decided } = await orphanedClaimThenReply(a);
  const s = a.h.app.services;
  // A worker on sparse positions, from the start of the log (the decided dispatches are passed over).
  await s.readModels.reset('outreachAgent', ['outreachAgentPendingReplies', 'outreachAgentDeferredDispatches']);
  const errors: unknown[] = [];
  const log = { error: (o: unknown) => errors.push(o), warn: (o: unknown) => errors.push(o) };
  const worker = new OutreachAgentWorker(
    {
      ...s,
      events: sparsePositions(s.events),
      fromLocalPart: s.config.AGENT_FROM_LOCAL_PART,
      mailDomain: s.config.MAIL_DOMAIN,
      triage: createTriage(s.config),
      drafter: createDrafter(s.config),
      mailer: s.mailer,
    },
    { ...agentOptionsFrom(s.config, log), workerId: 'sparse' },
  );
  await worker.start();
  t.teardown(() => worker.stop());
  await waitFor('the deferred dispatch to be decided', async () => ((await decided()) === 2 ? true : undefined), 10_000);
  t.same(errors, [], 'no failed page');
});

t.test("a prospect's reply on a conversation a person handles: aiPaused with the reason, and no dispatch", async (t) => {
  const a = await startAgentHarness();
  t.teardown(() => a.close());
  const id = (await a.pitch({ messageId: '<t1@prospect.io>' })).conversationIds[0]!;
  await a.waitForEvent(id, 'ConversationStatusChanged');
  const ourReply = a.sink.received[0]!.parsed.messageId!;
  const conversation = async () =>
    (await a.h.app.fastify.inject({ method: 'GET', url: `/api/v1/sites/${a.h.tenant.siteId}/outreach/conversations/${id}`, headers: bearer(a.h.tenant.key) })).json();
  t.equal((await act(a.h.app.fastify, a.h.tenant, id, 'takeover')).statusCode, 200);

  const paused = await a.pitch({ subject: 'Re: x', bodyText: 'Great, thanks!', messageId: '<t2@prospect.io>', inReplyTo: ourReply });
  t.same(paused.conversationIds, [id], 'joined the thread');
  t.match(paused, { aiPaused: true, skipReason: 'taken_over' });
  const shown = async () => {
    const body = await conversation();
    const c = body.conversation ?? body;
    return { aiPaused: c.aiPaused, skipReason: c.skipReason ?? null };
  };
  t.same(await shown(), { aiPaused: true, skipReason: 'taken_over' }, 'the conversation shows the pause');
  t.equal((await act(a.h.app.fastify, a.h.tenant, id, 'handback')).statusCode, 200);
  t.same(await shown(), { aiPaused: false, skipReason: null }, 'handed back: the pause ended with its cause');

  t.equal((await act(a.h.app.fastify, a.h.tenant, id, 'status', { status: 'awaiting_human' })).statusCode, 200);
  const waiting = await a.pitch({ subject: 'Re: x', bodyText: 'Any news?', messageId: '<t3@prospect.io>', inReplyTo: ourReply });
  t.match(waiting, { aiPaused: true, skipReason: 'awaiting_human' });
  t.same(await shown(), { aiPaused: true, skipReason: 'awaiting_human' });
  t.equal((await act(a.h.app.fastify, a.h.tenant, id, 'status', { status: 'open' })).statusCode, 200);
  t.same(await shown(), { aiPaused: false, skipReason: null }, 'open again: the pause ended');

  const dispatches = (await a.h.app.services.events.readAll({ after: -1n, limit: 10_000 })).filter((e) => e.type === 'AgentDispatchRequested');
  t.equal(dispatches.length, 1, 'only the first pitch was dispatched');
  t.notOk((await a.conversationEvents(id)).some((e) => e.type === 'AgentSkipped'), 'nothing for the agent to skip');
});

t.test("an agent reply whose sender died is not sent once a person took the conversation over, even through the idempotent outbox", async (t) => {
  const { events, outbox } = storeAndOutbox(t);
  const sender = await recoverGoneWorkersReply(events, outbox, [{ type: 'ConversationTakenOver', data: { by: 'u1' } }]);
  await waitFor('the recovery to be recorded', async () => ((await events.readStream(conversationStream('c1'))).length === 5 ? true : undefined), 5_000);
  await sender.stop();
  const last = (await events.readStream(conversationStream('c1'))).at(-1)!;
  t.equal(last.type, 'ReplySendFailed');
  t.match(last.data, { retryAt: null, error: /^not sent; withdrawn: a person took the conversation over$/ });
  t.same(outbox.listOutbox({ limit: 10 }), [], 'nothing in the outbox');
});
