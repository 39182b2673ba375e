import t from 'tap';
import { noDispatchStored, startAgentHarness, waitFor } from './helpers.ts';

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
  await noDispatchStored(s.readModels);
  t.pass('and no longer stored as deferred: the page with its decision removed it');
});

t.test('a stored deferred dispatch gone from the log, found while the log is idle, is removed with the next page', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const s = a.h.app.services;
  const head = await s.events.headPosition();
  const gone = { id: 'GONEDISPATCH00000000000000', conversationId: 'NOCONVERSATION000000000000', streamId: 'ingestion-deleted', revision: '0', position: '0', watch: ['NOCONVERSATION000000000000'] };
  t.ok(await s.readModels.applyBatch('outreachAgent', 1, -1n, head, async (writerAt) => void (await writerAt(0n).put('outreachAgentDeferredDispatches', gone))));

  await a.startAgent();
  // The idle round right after the start finds it gone; then a page comes (another pitch).
  await new Promise((resolve) => setTimeout(resolve, 500));
  const conversationId = (await a.pitch({ messageId: '<after-gone@prospect.io>' })).conversationIds[0]!;
  await a.waitForEvent(conversationId, 'AgentTriaged', 10_000);
  await waitFor('the gone deferred dispatch to be removed', async () => ((await s.readModels.get('outreachAgentDeferredDispatches', gone.id)) === null ? true : undefined), 10_000);
  t.pass('removed from the store');
});
