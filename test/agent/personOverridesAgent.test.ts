import t from 'tap';
import { handleCommand } from '../../src/commands/handleCommand.ts';
import { conversationDecider, conversationStream } from '../../src/domain/conversation.ts';
import { bearer } from '../helpers/testApp.ts';
import { act } from '../inbox/actionsHelpers.ts';
import { envelopes, startAgentHarness, waitFor } from './helpers.ts';

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
  const draft = {
    messageId: 'm-out', rfcMessageId: '<reply.m-out@example.com>', from: { name: null, address: 'outreach@example.com' }, to: { name: null, address: 'p@prospect.test' },
    subject: 'Re: x', bodyText: 'Yes', inReplyTo: null, references: [], returnPath: null, drafter: 'template-v1', draftSha256: 'ab',
  };
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
  const a = await startAgentHarness({ env: { AGENT_ORPHAN_AFTER_MS: '300' } });
  t.teardown(() => a.close());
  const id = (await a.pitch({ messageId: '<p1@prospect.io>' })).conversationIds[0]!;
  await a.waitForEvent(id, 'ConversationStatusChanged');
  const ourReply = a.sink.received[0]!.parsed.messageId!;
  await a.agent!.stop();
  a.agent = null;

  // An API process claimed a person's reply on the conversation and died before recording its outcome.
  const s = a.h.app.services;
  const draftId = s.newId();
  await handleCommand(
    s.events,
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
  const otherId = (await a.pitch({ from: 'bob@other.io', messageId: '<p2@other.io>' })).conversationIds[0]!;
  await a.startAgent();

  await a.waitForEvent(otherId, 'AgentTriaged');
  // The orphaned claim is recovered after AGENT_ORPHAN_AFTER_MS, then the waiting dispatch is decided.
  const failed = await a.waitForEvent(id, 'ReplySendFailed');
  t.match(failed.data.error, /outcome_unknown/);
  const decided = async () => (await a.conversationEvents(id)).filter((e) => e.type === 'AgentTriaged' || e.type === 'AgentSkipped').length;
  await waitFor('the waiting dispatch to be decided', async () => ((await decided()) === 2 ? true : undefined), 10_000);
  const head = await s.events.headPosition();
  await waitFor('the agent to reach the head', async () => (((await s.readModels.getCheckpoint('outreachAgent'))?.position ?? -1n) >= head ? true : undefined), 10_000);
  t.same(await s.readModels.find('outreachAgentDeferredDispatches', {}), [], 'nothing left deferred');
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
  t.match((await conversation()).conversation ?? (await conversation()), { aiPaused: true, skipReason: 'taken_over' });

  t.equal((await act(a.h.app.fastify, a.h.tenant, id, 'status', { status: 'awaiting_human' })).statusCode, 200);
  t.equal((await act(a.h.app.fastify, a.h.tenant, id, 'handback')).statusCode, 200);
  const waiting = await a.pitch({ subject: 'Re: x', bodyText: 'Any news?', messageId: '<t3@prospect.io>', inReplyTo: ourReply });
  t.match(waiting, { aiPaused: true, skipReason: 'awaiting_human' });

  const dispatches = (await a.h.app.services.events.readAll({ after: -1n, limit: 10_000 })).filter((e) => e.type === 'AgentDispatchRequested');
  t.equal(dispatches.length, 1, 'only the first pitch was dispatched');
  t.notOk((await a.conversationEvents(id)).some((e) => e.type === 'AgentSkipped'), 'nothing for the agent to skip');
});
