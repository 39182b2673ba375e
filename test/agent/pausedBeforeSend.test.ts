import t, { type Test } from 'tap';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
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

type Harness = Awaited<ReturnType<typeof startAgentHarness>>;
const agentUpdate = (payload: object) => async (t: Test, a: Harness) => {
  const put = await a.h.app.fastify.inject({ method: 'PUT', url: `/api/v1/sites/${a.h.tenant.siteId}/agents/outreach`, headers: bearer(a.h.tenant.key), payload });
  t.equal(put.statusCode, 200, put.body);
};
const licenceWithdrawn = async (_t: Test, a: Harness) => {
  await changeSiteSettings(a.h.app.services, { siteId: a.h.tenant.siteId, changes: { licensed: false } });
};

for (const [name, pause, detail] of [
  ['inactive', agentUpdate({ isActive: false }), 'the Outreach Agent is inactive'],
  ['auto-reply off', agentUpdate({ settings: { autoReply: false } }), "the Outreach Agent's auto-reply is off"],
  ['licence withdrawn', licenceWithdrawn, 'the site has no active licence'],
] as const) {
  t.test(`paused (${name}) after a failed first attempt, the agent's retry does not go out`, async (t) => {
    const a = await startAgentHarness({ env: { AGENT_RETRY_BASE_MS: '800', AGENT_RETRY_FACTOR: '1' }, sink: failOnce() });
    t.teardown(() => a.close());
    const id = (await a.pitch()).conversationIds[0]!;
    await a.waitForEvent(id, 'ReplySendFailed');
    await pause(t, a);
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

t.test('a licence withdrawn between the ingestion and the triage: the agent skips the dispatch, no model call, no mail', async (t) => {
  const a = await startAgentHarness({ startAgent: false });
  t.teardown(() => a.close());
  const id = (await a.pitch()).conversationIds[0]!;
  const { position } = await changeSiteSettings(a.h.app.services, { siteId: a.h.tenant.siteId, changes: { licensed: false } });
  // The worker reads the site from the read models (the last check before a send reads its stream).
  t.ok(await a.h.app.services.projections.waitFor(position!, 5_000));
  await a.startAgent();
  const skipped = await a.waitForEvent(id, 'AgentSkipped');
  t.match(skipped.data, { reason: 'agent_inactive' });
  const events = await a.conversationEvents(id);
  t.notOk(events.some((e) => e.type === 'AgentTriaged' || e.type === 'ReplyDrafted'), 'not triaged, nothing drafted');
  t.equal(a.sink.received.length, 0);
});
