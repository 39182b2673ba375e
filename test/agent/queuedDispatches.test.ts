import t from 'tap';
import { conversationStream } from '../../src/domain/conversation.ts';
import type { EventStore } from '../../src/ports/eventStore.ts';
import { startAgentWorker } from '../../src/processors/agent/startAgentWorker.ts';
import { retryFailedTriageAfterMs } from '../../src/processors/agent/outreachAgentWorker.ts';
import { completion, fakeOpenAi } from '../helpers/fakeOpenAi.ts';
import { agentCheckpointReaches, noDispatchStored, startAgentHarness, stoppedWithDispatchesQueued } from './helpers.ts';

/**
 * The worker's checkpoint passes a page's dispatches once they are stored, before their triage; the
 * lanes then work them off. What was queued when the worker stopped (or died) is triaged after the
 * next start, each dispatch decided once.
 */
t.test('dispatches queued at a stop are stored, and decided once after the next start', async (t) => {
  const { a, ids, triageCalls } = await stoppedWithDispatchesQueued(t, 5, 'queued');
  const s = a.h.app.services;
  const decidedBefore = (await Promise.all(ids.map(async (id) => (await a.conversationEvents(id)).some((e) => e.type === 'AgentTriaged')))).filter(Boolean).length;
  t.ok(decidedBefore < 5, `stopped with dispatches still queued (${decidedBefore} of 5 decided)`);
  const stored = await s.readModels.find('outreachAgentDeferredDispatches', {});
  t.ok(stored.length >= 5 - decidedBefore, `the undecided ones are stored with the checkpoint (${stored.length} stored)`);

  await a.startAgent();
  for (const id of ids) await a.waitForEvent(id, 'AgentTriaged', 20_000);
  for (const id of ids) t.equal((await a.conversationEvents(id)).filter((e) => e.type === 'AgentTriaged').length, 1, 'each decided once');
  // A triage interrupted by the stop may be asked again.
  const triages = triageCalls();
  t.ok(triages <= 5 + 1, `no dispatch decided before the stop was triaged again by the model (${triages} triage calls)`);
  await noDispatchStored(s.readModels);
  t.pass('none left stored');
});

/**
 * A triage that fails on an event-store error is tried again for its conversation after a pause,
 * without holding the others: before, the whole page was read again.
 */
t.test('the pause after failed triages doubles from 50 ms to a minute', async (t) => {
  t.same([1, 2, 8, 11, 12, 100].map(retryFailedTriageAfterMs), [50, 100, 6_400, 51_200, 60_000, 60_000]);
});

t.test('a triage failing on a store error is retried for its conversation; the others go on', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const s = a.h.app.services;
  const failing = (await a.pitch({ from: 'fail@prospect.test', messageId: '<fails@prospect.test>' })).conversationIds[0]!;
  const other = (await a.pitch({ from: 'fine@prospect.test', messageId: '<fine@prospect.test>' })).conversationIds[0]!;
  const background = s.events.offThreadAppends?.() ?? s.events;
  const events: EventStore = Object.create(background);
  events.offThreadAppends = () => events;
  let failures = 0;
  events.readStream = async (streamId, options) => {
    if (streamId === conversationStream(failing) && failures < 3) {
      failures++;
      throw new Error('SQLITE_IOERR: disk I/O error (injected)');
    }
    return background.readStream(streamId, options);
  };
  const errors: Array<{ msg?: string; failures?: number; retryInMs?: number }> = [];
  a.agent = await startAgentWorker({ ...s, events }, { error: (o, msg) => errors.push({ msg, ...(o as object) }), warn: () => {} });
  await a.waitForEvent(other, 'AgentTriaged', 10_000);
  await a.waitForEvent(failing, 'AgentTriaged', 10_000);
  t.equal(failures, 3, 'failed three times');
  t.same(errors.map((e) => e.msg), Array(3).fill('outreach agent triage failed; retrying'), 'each failure logged');
  t.same(errors.map((e) => [e.failures, e.retryInMs]), [[1, 50], [2, 100], [3, 200]], 'with its count and the pause before the next try');
  for (const id of [failing, other]) t.equal((await a.conversationEvents(id)).filter((e) => e.type === 'AgentTriaged').length, 1, 'decided once');
});

/**
 * The page holding a decision's event may be read before the lane recorded the decision (here the
 * append's acknowledgement comes 100 ms after the event is in the log): with no further page, the
 * decided dispatch is removed from the store while the log is idle (from a review).
 */
t.test('a decided dispatch is removed from the store on an idle log', async (t) => {
  // A decision that sends nothing (no reply, so no later event on the log).
  const model = await fakeOpenAi(t);
  model.set(() => ({ status: 200, json: completion(JSON.stringify({ outcome: 'needs_human', reasons: ['test'] })) }));
  const a = await startAgentHarness({ env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: model.baseURL }, startAgent: false });
  t.teardown(() => a.close());
  const s = a.h.app.services;
  const background = s.events.offThreadAppends?.() ?? s.events;
  const events: EventStore = Object.create(background);
  events.offThreadAppends = () => events;
  events.append = async (...args: Parameters<EventStore['append']>) => {
    const appended = await background.append(...args);
    await new Promise((resolve) => setTimeout(resolve, 100));
    return appended;
  };
  a.agent = await startAgentWorker({ ...s, events }, { error: () => {}, warn: () => {} });
  const id = (await a.pitch({ from: 'x@prospect.test', messageId: '<idle-removal@prospect.test>' })).conversationIds[0]!;
  await a.waitForEvent(id, 'AgentTriaged');
  const head = await s.events.headPosition();
  await agentCheckpointReaches(s.readModels, head);
  await noDispatchStored(s.readModels, 5_000);
  t.pass('removed');
});
