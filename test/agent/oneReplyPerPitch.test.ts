import t from 'tap';
import { takeOverConversation } from '../../src/commands/conversations.ts';
import { TWO_ASKS, mailsTo, startAgentHarness, statusesOf } from './helpers.ts';
import { bearer } from '../helpers/testApp.ts';

/**
 * A pitch with several asks opens a conversation per ask (the spec), and gets one reply that names
 * every ask, not one near-identical mail per ask, when every ask is triaged alike and every
 * conversation is still the agent's: the first conversation answers, the others follow its reply's
 * outcome. Otherwise each conversation answers its own ask.
 */

t.test('two asks: one mail naming both links; the second conversation takes the first one\'s decision', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const { conversationIds } = await a.pitch(TWO_ASKS);
  t.equal(conversationIds.length, 2, 'a conversation per ask');
  const [first, second] = conversationIds as [string, string];
  await a.startAgent();
  await a.waitForEvent(first, 'ReplySent');
  t.ok((await a.waitForEvent(first, 'AgentTriaged')).data.reasons.includes('answered_for_every_ask'), 'the first records that its reply answers every ask');
  t.same((await a.waitForEvent(first, 'ReplyDrafted')).data.answersFor, [second], 'its draft names the conversations it answers too');
  const followed = await a.waitForEvent(second, 'AgentTriaged');
  t.equal(followed.data.outcome, 'accept');
  t.notOk(followed.data.reasons.includes('answered_for_every_ask'));
  t.ok(followed.data.reasons.includes('answered_in_first_conversation'), `the second records why it sends nothing (${followed.data.reasons.join(', ')})`);
  // Let the worker go on past anything it might still do.
  await a.agent!.worker.waitForPosition(await a.h.app.services.events.headPosition(), 10_000);

  const mails = mailsTo(a, 'max@linkco.io');
  t.equal(mails.length, 1, 'one mail to the sender, not one per ask');
  const text = mails[0]!.parsed.text ?? '';
  t.match(text, 'https://linkco.io/one with the anchor text "first tool" on https://example.test/a');
  t.match(text, 'https://linkco.io/two with the anchor text "second tool" on https://example.test/b');

  const secondEvents = await a.conversationEvents(second);
  t.same(secondEvents.filter((e) => /^Reply/.test(e.type)).map((e) => e.type), [], 'nothing drafted or sent on the second');
  const statuses = await statusesOf(a, [first, second]);
  t.same(statuses, [['resolved'], ['resolved']], 'both resolved: the first by its reply, the second with it');

  // The inbox shows the reply in both conversations.
  const read = async (id: string) =>
    (await a.h.app.fastify.inject({ url: `/api/v1/sites/${a.h.tenant.siteId}/outreach/conversations/${id}`, headers: bearer(a.h.tenant.key) })).json();
  for (const id of [first, second]) {
    let body = await read(id);
    // The projections follow the log: wait until they hold the reply.
    for (let tries = 0; body.conversation?.messages?.length < 2 && tries < 200; tries++) {
      await new Promise((r) => setTimeout(r, 25));
      body = await read(id);
    }
    t.same(body.conversation.messages.map((m: { direction: string }) => m.direction), ['inbound', 'outbound'], `conversation ${id === first ? 'one' : 'two'}: the pitch and the one reply`);
    t.equal(body.conversation.messageCount, 2);
  }
});

t.test('a person took the first conversation over before the agent: the second answers its own ask', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const { conversationIds } = await a.pitch(TWO_ASKS);
  const [first, second] = conversationIds as [string, string];
  const { siteId, teamId } = a.h.tenant;
  await takeOverConversation(a.h.app.services, { conversation: { conversationId: first, siteId, teamId }, by: null });
  await a.startAgent();
  t.equal((await a.waitForEvent(first, 'AgentSkipped')).data.reason, 'taken_over');
  await a.waitForEvent(second, 'ReplySent');
  const mails = mailsTo(a, 'max@linkco.io');
  t.equal(mails.length, 1);
  const text = mails[0]!.parsed.text ?? '';
  t.match(text, 'https://linkco.io/two');
  t.notMatch(text, 'https://linkco.io/one', 'only its own ask: the first is the person\'s to answer');
});

const withSecondAsk = (target: string) => ({ ...TWO_ASKS, bodyText: TWO_ASKS.bodyText.replace('https://linkco.io/two', target) });

t.test('asks triaged differently: no combined reply; each conversation decides its own ask', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const [first, second] = (await a.pitch(withSecondAsk('https://bit.ly/3abcd'))).conversationIds as [string, string];
  await a.startAgent();
  await a.waitForEvent(first, 'ReplySent');
  const own = await a.waitForEvent(second, 'AgentTriaged');
  t.equal(own.data.outcome, 'needs_human', `the shortened link is a person's to judge (${own.data.reasons.join(', ')})`);
  t.notOk(own.data.reasons.includes('answered_in_first_conversation'));
  const mails = mailsTo(a, 'max@linkco.io');
  t.equal(mails.length, 1, 'one mail: the first ask\'s');
  t.notMatch(mails[0]!.parsed.text ?? '', 'bit.ly', 'the reply does not accept the ask that was not accepted');
});

t.test('the second conversation was taken over before the agent: the reply names only the first ask', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const [first, second] = (await a.pitch(TWO_ASKS)).conversationIds as [string, string];
  const { siteId, teamId } = a.h.tenant;
  await takeOverConversation(a.h.app.services, { conversation: { conversationId: second, siteId, teamId }, by: null });
  await a.startAgent();
  await a.waitForEvent(first, 'ReplySent');
  t.equal((await a.waitForEvent(second, 'AgentSkipped')).data.reason, 'taken_over');
  const text = mailsTo(a, 'max@linkco.io')[0]?.parsed.text ?? '';
  t.match(text, 'https://linkco.io/one');
  t.notMatch(text, 'https://linkco.io/two', "the person's ask is the person's to answer");
});

t.test("the first conversation's reply fails for good: the second goes to a person too, not resolved", async (t) => {
  const a = await startAgentHarness({ startAgent: false, sink: { rcpt: (address) => (address === 'max@linkco.io' ? { code: 550, message: 'no such user' } : null) } });
  t.teardown(() => a.close());
  const [first, second] = (await a.pitch(TWO_ASKS)).conversationIds as [string, string];
  await a.startAgent();
  await a.waitForEvent(first, 'ReplySendFailed');
  const followed = await a.waitForEvent(second, 'AgentTriaged');
  t.equal(followed.data.outcome, 'needs_human');
  t.ok(followed.data.reasons.includes('first_conversation_reply_not_sent'), followed.data.reasons.join(', '));
  const statuses = await statusesOf(a, [first, second]);
  t.same(statuses, [['awaiting_human'], ['awaiting_human']]);
});
