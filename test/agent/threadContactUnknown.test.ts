import t from 'tap';
import { createDrafter } from '../../src/adapters/drafting/createDrafter.ts';
import { createTriage } from '../../src/adapters/triage/createTriage.ts';
import type { ReadModelStore } from '../../src/ports/readModelStore.ts';
import { OutreachAgentWorker } from '../../src/processors/agent/outreachAgentWorker.ts';
import { agentOptionsFrom } from '../../src/processors/agent/startAgentWorker.ts';
import { CONVERSATIONS } from '../../src/readModels/conversations.ts';
import { act } from '../inbox/actionsHelpers.ts';
import { startAgentHarness, waitFor } from './helpers.ts';

/**
 * Whether a message on a thread comes from the conversation's contact is read from the read models
 * (the worker does not wait for them): while they do not hold the conversation, the dispatch waits,
 * rather than let anyone on the thread decide for the contact (from a review).
 */
t.test("a thread's dispatch waits while the read models do not hold the conversation, then is decided", async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const s = a.h.app.services;
  const id = (await a.pitch({ messageId: '<c1@prospect.io>' })).conversationIds[0]!;
  const own = await a.pitch({ subject: 'Re: x', bodyText: 'Please unsubscribe me.', from: 'mallory@evil.example', messageId: '<c2@evil.example>', inReplyTo: '<c1@prospect.io>' });
  t.same(own.conversationIds, [id], 'a stranger on the thread');

  let hidden = true;
  const readModels: ReadModelStore = Object.create(s.readModels);
  readModels.get = (async (collection: string, docId: string) => (hidden && collection === CONVERSATIONS && docId === id ? null : s.readModels.get(collection, docId))) as ReadModelStore['get'];
  const worker = new OutreachAgentWorker(
    { ...s, readModels, fromLocalPart: s.config.AGENT_FROM_LOCAL_PART, mailDomain: s.config.MAIL_DOMAIN, triage: createTriage(s.config), drafter: createDrafter(s.config), mailer: s.mailer },
    { ...agentOptionsFrom(s.config), workerId: 'lagging' },
  );
  await worker.start();
  t.teardown(() => worker.stop());
  const decisions = async () => (await a.conversationEvents(id)).filter((e) => e.type === 'AgentTriaged').map((e) => e.data as { outcome: string; reasons: string[] });
  await waitFor('the pitch to be decided', async () => ((await decisions()).length === 1 ? true : undefined), 10_000);
  await new Promise((r) => setTimeout(r, 500));
  t.equal((await decisions()).length, 1, "the stranger's message waits: the contact is not known yet");

  hidden = false;
  t.equal((await act(a.h.app.fastify, a.h.tenant, id, 'read')).statusCode, 200, 'an event on the conversation takes its deferred dispatches up again');
  await waitFor('the stranger to be decided', async () => ((await decisions()).length === 2 ? true : undefined), 10_000);
  t.match((await decisions())[1], { outcome: 'needs_human', reasons: ['opt_out_phrase', 'not_the_contact'] });
});
