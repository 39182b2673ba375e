import t from 'tap';
import { handleCommand } from '../../src/commands/handleCommand.ts';
import { type ConversationCommand, conversationDecider, conversationStream } from '../../src/domain/conversation.ts';
import { startAgentWorker } from '../../src/processors/agent/startAgentWorker.ts';
import { type AgentHarness, orphanedClaimThenReply, readBackFailsOnce, startAgentHarness, stoppedWithDispatchesQueued, waitFor, withReadStream } from './helpers.ts';

/**
 * Store errors around the agent's triage lanes (from reviews): the log as the worker sees it is
 * wrapped (our own port, not a client library) so that reads or the checkpoint's batch fail.
 */

/** Counts the triages' reads of a conversation; `slowOnce()` makes the next one take 600 ms. */
const triageReads = (a: AgentHarness, conversationId: string) => {
  let count = 0;
  let slow = false;
  const events = withReadStream(a, async (real, streamId, options) => {
    if (streamId === conversationStream(conversationId) && new Error().stack?.includes('triageDispatch')) {
      count++;
      if (slow) {
        slow = false;
        await new Promise((resolve) => setTimeout(resolve, 600));
      }
    }
    return real(streamId, options);
  });
  return { events, count: () => count, slowOnce: () => void (slow = true) };
};

t.test("a failed read of a waiting dispatch when its wait ended: it stays waiting, and is decided once the read works", async (t) => {
  const a = await startAgentHarness({ env: { AGENT_ORPHAN_AFTER_MS: '1000' } });
  t.teardown(() => a.close());
  const { decided } = await orphanedClaimThenReply(a);
  const { events, failed } = readBackFailsOnce(a);
  const errors: string[] = [];
  a.agent = await startAgentWorker({ ...a.h.app.services, events }, { error: (_o, msg) => errors.push(msg ?? ''), warn: () => {} });
  await waitFor('the waiting dispatch to be decided', async () => ((await decided()) === 2 ? true : undefined), 10_000);
  t.equal(failed(), 1, 'the read back failed once');
  t.same(errors, ['outreach agent worker failed; retrying'], 'the step was tried again');
});

t.test('a triage ending deferred while the checkpoint cannot move does not loop', async (t) => {
  const a = await startAgentHarness({ env: { AGENT_ORPHAN_AFTER_MS: '600000' } });
  t.teardown(() => a.close());
  const { id } = await orphanedClaimThenReply(a);
  const s = a.h.app.services;
  const { events, count, slowOnce } = triageReads(a, id);
  a.agent = await startAgentWorker({ ...s, events }, { error: () => {}, warn: () => {} });
  await waitFor('the dispatch to be triaged (and deferred: the orphaned claim is in flight)', async () => (count() > 0 ? true : undefined), 10_000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  // The worker's batches fail for 2 s while events on the conversation come in.
  const until = Date.now() + 2_000;
  const applyBatch = s.readModels.applyBatch.bind(s.readModels);
  s.readModels.applyBatch = async (...args) => {
    if (args[0] === 'outreachAgent' && Date.now() < until) throw new Error('SQLITE_BUSY: database is locked (injected)');
    return applyBatch(...args);
  };
  const before = count();
  // The triage the first event sets off is still running when the pages after it are read.
  slowOnce();
  const ref = { conversationId: id, siteId: a.h.tenant.siteId, teamId: a.h.tenant.teamId };
  for (const type of ['MarkUnread', 'MarkRead', 'MarkUnread'] as const) {
    const command = { type, data: { ...ref, now: Date.now(), by: null, lastInboundMessageId: null } } as ConversationCommand;
    await handleCommand(s, conversationStream(id), conversationDecider, command, {});
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  // A timer of this test still fires (the thread is not held), and the triages are a handful.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  t.ok(count() - before <= 20, `triaged again ${count() - before} times, once per page that touched it at most`);
});

t.test('a worker stopped and started again takes up what it had queued', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const id = (await a.pitch({ from: 'fail@prospect.test', messageId: '<stop-start@prospect.test>' })).conversationIds[0]!;
  let failing = true;
  let failures = 0;
  const events = withReadStream(a, (real, streamId, options) => {
    if (failing && streamId === conversationStream(id)) {
      failures++;
      return Promise.reject(new Error('SQLITE_IOERR: disk I/O error (injected)'));
    }
    return real(streamId, options);
  });
  a.agent = await startAgentWorker({ ...a.h.app.services, events }, { error: () => {}, warn: () => {} });
  await waitFor('a failed triage', async () => (failures > 0 ? true : undefined), 10_000);
  await a.agent.worker.stop();
  failing = false;
  await a.agent.worker.start();
  await a.waitForEvent(id, 'AgentTriaged', 10_000);
  await a.waitForEvent(id, 'ReplySent', 10_000);
  t.equal(a.sink.received.length, 1, 'its reply sent, once');
  t.ok(await a.agent.worker.waitForPosition(await a.h.app.services.events.headPosition(), 10_000), 'and its position reaches the head');
});

t.test("a failed read back in the round of every stored dispatch (after a start): the round is done again, not a minute later", async (t) => {
  const { a, ids } = await stoppedWithDispatchesQueued(t, 4, 'round');
  const s = a.h.app.services;
  const { events, failed } = readBackFailsOnce(a);
  a.agent = await startAgentWorker({ ...s, events }, { error: () => {}, warn: () => {} });
  t.ok(await a.agent.worker.waitForPosition(await s.events.headPosition(), 15_000), 'every stored dispatch triaged within 15 s');
  t.equal(failed(), 1, 'after one failed read');
  for (const id of ids) await a.waitForEvent(id, 'AgentTriaged', 1_000);
});
