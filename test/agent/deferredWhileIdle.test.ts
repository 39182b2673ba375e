import t from 'tap';
import { startAgentHarness, waitFor } from './helpers.ts';

/**
 * A deferred dispatch (waiting for a reply's outcome, say) is taken up again after a restart even
 * when nothing new is ever written to the log: it waited for the next unrelated event before.
 */
t.test('after a restart on an idle log, a stored deferred dispatch is decided', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const s = a.h.app.services;
  const conversationId = (await a.pitch({ messageId: '<idle-deferred@prospect.io>' })).conversationIds[0]!;
  const dispatch = (await s.events.readAll({ limit: 10_000 })).find((e) => e.type === 'AgentDispatchRequested' && (e.data as { conversationId: string }).conversationId === conversationId)!;
  t.ok(dispatch, 'the ingestion requested a dispatch');

  // As a worker left it: its checkpoint at the head, the dispatch stored as deferred (it was waiting when the worker stopped).
  const head = await s.events.headPosition();
  const stored = await s.readModels.applyBatch('outreachAgent', 1, -1n, head, async (writerAt) => {
    await writerAt(dispatch.position).put('outreachAgentDeferredDispatches', {
      id: (dispatch.data as { dispatchId: string }).dispatchId,
      conversationId,
      streamId: dispatch.streamId,
      revision: dispatch.revision.toString(),
      position: dispatch.position.toString(),
      watch: [conversationId],
    });
  });
  t.ok(stored);

  await a.startAgent();
  const triaged = await a.waitForEvent(conversationId, 'AgentTriaged', 10_000);
  t.equal(triaged.data.dispatchId, (dispatch.data as { dispatchId: string }).dispatchId, 'the deferred dispatch, decided');
  const at = (await s.events.readStream(`conversation-${conversationId}`)).find((e) => e.type === 'AgentTriaged')!.position;
  t.same((await s.events.readAll({ after: head, limit: 10_000 })).filter((e) => e.position < at).map((e) => e.type), [], 'with nothing written to the log before it');
  await a.waitForEvent(conversationId, 'ReplySent', 10_000);
  t.equal(a.sink.received.length, 1, 'its reply sent once');
  await waitFor('the deferred dispatch to be removed', async () => ((await s.readModels.find('outreachAgentDeferredDispatches', {})).length === 0 ? true : undefined), 10_000);
  t.pass('and no longer stored as deferred: the page with its decision removed it');
});
