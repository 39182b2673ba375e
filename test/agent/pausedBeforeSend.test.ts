import t from 'tap';
import { bearer } from '../helpers/testApp.ts';
import { act } from '../inbox/actionsHelpers.ts';
import { envelopes, startAgentHarness } from './helpers.ts';

/**
 * A paused agent sends nothing more: the gate every attempt passes reads the agent's settings from
 * its stream, as it reads the suppression list and the domain's verification. (The audit paused the
 * agent between a reply's failed first attempt and its retry, and the retry went out.)
 */

const failOnce = () => {
  let tries = 0;
  return { data: () => (++tries <= 1 ? { code: 451, message: '4.3.0 try again later' } : null) };
};

for (const [pause, detail] of [
  [{ isActive: false }, 'the Outreach Agent is inactive'],
  [{ settings: { autoReply: false } }, "the Outreach Agent's auto-reply is off"],
] as const) {
  t.test(`paused (${JSON.stringify(pause)}) after a failed first attempt, the agent's retry does not go out`, async (t) => {
    const a = await startAgentHarness({ env: { AGENT_RETRY_BASE_MS: '800', AGENT_RETRY_FACTOR: '1' }, sink: failOnce() });
    t.teardown(() => a.close());
    const id = (await a.pitch()).conversationIds[0]!;
    await a.waitForEvent(id, 'ReplySendFailed');
    const put = await a.h.app.fastify.inject({ method: 'PUT', url: `/api/v1/sites/${a.h.tenant.siteId}/agents/outreach`, headers: bearer(a.h.tenant.key), payload: pause });
    t.equal(put.statusCode, 200, put.body);
    await a.waitForEvent(id, 'ConversationStatusChanged');
    const events = await a.conversationEvents(id);
    const failures = events.filter((e) => e.type === 'ReplySendFailed');
    t.equal(failures.length, 2, 'the first attempt, then the withdrawn retry');
    t.match(failures[1]!.data, { attempt: 2, permanent: true, retryAt: null, error: `not sent; withdrawn: ${detail}` });
    t.equal(a.sink.received.length, 0, 'no mail left');
    t.notOk(events.some((e) => e.type === 'ReplySent'));
    t.match(events.at(-1)!.data, { newStatus: 'awaiting_human' }, 'a person decides');
    t.same(envelopes(a.receiver, 'outreach.reply_sent'), []);
  });
}

t.test("a person's reply is retried whatever the agent's settings", async (t) => {
  const a = await startAgentHarness({ ready: false, env: { AGENT_RETRY_BASE_MS: '300', AGENT_RETRY_FACTOR: '1' }, sink: failOnce() });
  t.teardown(() => a.close());
  const id = (await a.pitch()).conversationIds[0]!;
  const res = await act(a.h.app.fastify, a.h.tenant, id, 'reply', { text: 'Happy to add it next week.' });
  t.equal(res.statusCode, 201, res.body);
  t.equal(res.json().message.deliveryStatus, 'retrying');
  await a.waitForEvent(id, 'ReplySent');
  t.equal(a.sink.received.length, 1, 'sent at its retry, the agent inactive');
});
