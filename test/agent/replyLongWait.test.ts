import t from 'tap';
import { conversationStream } from '../../src/domain/conversation.ts';
import { ReplySender } from '../../src/processors/agent/replySender.ts';
import { GONE_WORKERS_DRAFT, storeAndOutbox } from './helpers.ts';

/**
 * A retry time stored before reply delays were capped may lie beyond a timer's reach (2^31 − 1 ms):
 * Node fires such a timer at once, so the sender waits for it in steps instead (as the webhook scheduler does).
 */
t.test('a reply whose retry is due in 35 days is not claimed again now; one due now is', async (t) => {
  const { events, outbox } = storeAndOutbox(t);
  const now = Date.now();
  const dueAt = { c1: now + 35 * 86_400_000, c2: now };
  for (const [conversationId, retryAt] of Object.entries(dueAt)) {
    const base = { conversationId, siteId: 's1', teamId: 't1', occurredAt: 1_000 };
    const messageId = `m-out-${conversationId}`;
    await events.append(conversationStream(conversationId), [
      { type: 'AgentTriaged', data: { ...base, dispatchId: 'd1', inboundMessageId: 'm-in', outcome: 'accept', classifier: 'offline-v1', reasons: [] }, metadata: {} },
      { type: 'ReplyDrafted', data: { ...base, ...GONE_WORKERS_DRAFT, messageId, rfcMessageId: `<reply.${messageId}@example.com>`, dispatchId: 'd1', direction: 'outbound', senderType: 'agent', triage: 'accept' }, metadata: {} },
      { type: 'ReplySendAttempted', data: { ...base, messageId, attempt: 1 }, metadata: { workerInstance: 'w/1' } },
      { type: 'ReplySendFailed', data: { ...base, messageId, attempt: 1, error: '451 try later', permanent: false, retryAt }, metadata: {} },
    ], 'no_stream');
  }
  // No read models: the second attempt's send stops at the suppression check, after its claim is stored.
  const deps = { events, readModels: null as never, clock: { now: () => new Date() }, secrets: null as never, newId: () => 'x', fromLocalPart: 'outreach', mailDomain: 'mail.test', mailer: outbox };
  const sender = new ReplySender(deps, { maxAttempts: 3, baseMs: 1_000, factor: 1, orphanAfterMs: 300_000 }, { workerId: 'w', instanceId: 'w/1' }, { error() {} });
  t.teardown(() => sender.stop());
  for (const [conversationId, retryAt] of Object.entries(dueAt)) {
    sender.track({ conversationId, siteId: 's1', teamId: 't1', messageId: `m-out-${conversationId}`, attempt: 1, inFlight: false, retryAt, startedBy: 'w/1', startedAt: 1_000 });
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  await sender.idle();
  const attempts = async (conversationId: string) =>
    (await events.readStream(conversationStream(conversationId))).filter((e) => e.type === 'ReplySendAttempted').map((e) => (e.data as { attempt: number }).attempt);
  t.same(await attempts('c2'), [1, 2], 'the reply due now is claimed for its second attempt');
  t.same(await attempts('c1'), [1], 'the one due in 35 days waits');
});
