import t from 'tap';
import { conversationStream } from '../../src/domain/conversation.ts';
import type { EventStore } from '../../src/ports/eventStore.ts';
import { startAgentWorker } from '../../src/processors/agent/startAgentWorker.ts';
import { orphanedClaimThenReply, startAgentHarness, waitFor } from './helpers.ts';

/**
 * The agent's lanes triage while the worker goes on reading pages. A dispatch found waiting on a
 * reply in flight, whose outcome came into the log and went by in a page while the triage was still
 * running, is taken up again at once: waiting for the next event on its conversation, it would have
 * waited for the minute's retry of every deferred dispatch.
 */
t.test("a wait that ended while the dispatch's triage ran does not hold it for a minute", async (t) => {
  const a = await startAgentHarness({ env: { AGENT_ORPHAN_AFTER_MS: '3000' } });
  t.teardown(() => a.close());
  // A reply claim left by a dead process, then the prospect's message on that conversation (the agent stopped).
  const { id, decided } = await orphanedClaimThenReply(a);
  const s = a.h.app.services;

  // The triage's read of the conversation is answered as it was before the claim was settled, after
  // the settlement's page went by (the worker's own port wrapped, not a client library).
  const background = s.events.offThreadAppends?.() ?? s.events;
  const events: EventStore = Object.create(background);
  events.offThreadAppends = () => events;
  let held = 0;
  events.readStream = async (streamId, options) => {
    const read = await background.readStream(streamId, options);
    if (streamId !== conversationStream(id) || held > 0 || read.some((e) => e.type === 'ReplySendFailed')) return read;
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 100;
    const inTriage = new Error().stack?.includes('triageDispatch');
    Error.stackTraceLimit = limit;
    if (!inTriage) return read;
    held++;
    await waitFor('the orphaned claim to be settled', async () => ((await s.events.readStream(conversationStream(id))).some((e) => e.type === 'ReplySendFailed') ? true : undefined), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 750));
    return read;
  };
  a.agent = await startAgentWorker({ ...s, events });
  const started = Date.now();
  await waitFor('the waiting dispatch to be decided', async () => ((await decided()) === 2 ? true : undefined), 20_000);
  t.equal(held, 1, "the triage's read was held once, past the settlement");
  t.ok(Date.now() - started < 15_000, `decided ${Date.now() - started} ms after the start, not after the minute's retry`);
});
