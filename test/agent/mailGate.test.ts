import t, { type Test } from 'tap';
import { handleCommand } from '../../src/commands/handleCommand.ts';
import { sendDraft } from '../../src/commands/sendDraft.ts';
import { conversationStream } from '../../src/domain/conversation.ts';
import { siteDecider, siteStream } from '../../src/domain/site.ts';
import { suppressionDecider, suppressionStream } from '../../src/domain/suppression.ts';
import { suppressContact } from '../../src/commands/suppression.ts';
import { changeSiteSettings } from '../../src/commands/tenancy.ts';
import { expectError } from '../helpers/http.ts';
import { act } from '../inbox/actionsHelpers.ts';
import { GONE_WORKERS_DRAFT, recoverGoneWorkersReply, startAgentHarness, storeAndOutbox, waitFor } from './helpers.ts';

/**
 * No mail leaves for a suppressed contact or from a site whose sending domain is not verified: not a
 * person's reply (409), and not an attempt, first or retry, after either changed since the draft.
 */

const complain = (a: Awaited<ReturnType<typeof startAgentHarness>>) =>
  suppressContact(a.h.app.services, { teamId: a.h.tenant.teamId, teamSiteIds: [a.h.tenant.siteId], siteId: a.h.tenant.siteId, email: 'Jane@Prospect.io', reason: 'complained', source: 'complaint' });

t.test("a person's reply to a contact who complained is refused with 409 CONTACT_SUPPRESSED; nothing is sent or recorded", async (t) => {
  const a = await startAgentHarness({ ready: false });
  t.teardown(() => a.close());
  const id = (await a.pitch()).conversationIds[0]!;
  await complain(a);
  const res = await act(a.h.app.fastify, a.h.tenant, id, 'reply', { text: 'Following up.' });
  expectError(t, res, 409, 'CONTACT_SUPPRESSED', 'reply to a suppressed contact');
  t.match(res.json().error.message, /suppression list \(complained\)/);
  t.equal(a.sink.received.length, 0, 'no mail');
  t.notOk((await a.conversationEvents(id)).some((e) => e.type === 'ReplyDrafted'), 'no draft recorded');
});

t.test("a person's reply from a site whose sending domain is not verified is refused with 409 SENDING_DOMAIN_UNVERIFIED", async (t) => {
  const a = await startAgentHarness({ ready: false });
  t.teardown(() => a.close());
  const id = (await a.pitch()).conversationIds[0]!;
  await changeSiteSettings(a.h.app.services, { siteId: a.h.tenant.siteId, changes: { sendingDomainVerified: false } });
  expectError(t, await act(a.h.app.fastify, a.h.tenant, id, 'reply', { text: 'Hello.' }), 409, 'SENDING_DOMAIN_UNVERIFIED');
  t.equal(a.sink.received.length, 0, 'nothing left From the unverified domain');
  await changeSiteSettings(a.h.app.services, { siteId: a.h.tenant.siteId, changes: { sendingDomainVerified: true } });
  t.equal((await act(a.h.app.fastify, a.h.tenant, id, 'reply', { text: 'Hello.' })).statusCode, 201, 'verified again, the reply goes');
  t.equal(a.sink.received.length, 1);
});

for (const [what, change] of [
  ['the contact is suppressed', complain],
  ["the site's sending domain loses its verification", (a: Awaited<ReturnType<typeof startAgentHarness>>) => changeSiteSettings(a.h.app.services, { siteId: a.h.tenant.siteId, changes: { sendingDomainVerified: false } })],
] as const) {
  t.test(`the agent's retry is not sent when ${what} after a temporary failure`, async (t) => {
    let refusals = 1;
    const a = await startAgentHarness({ env: { AGENT_RETRY_BASE_MS: '1500' }, sink: { data: () => (refusals-- > 0 ? { code: 451, message: '4.7.1 greylisted' } : null) } });
    t.teardown(() => a.close());
    const id = (await a.pitch()).conversationIds[0]!;
    const failed = await a.waitForEvent(id, 'ReplySendFailed');
    t.not(failed.data.retryAt, null, 'the first attempt failed for now');
    await change(a);
    const withdrawn = await waitFor('the second attempt recorded', async () => (await a.conversationEvents(id)).filter((e) => e.type === 'ReplySendFailed')[1], 15_000);
    t.equal(withdrawn.data.retryAt, null, 'the retry ends the reply');
    t.equal(withdrawn.data.permanent, true);
    t.match(withdrawn.data.error, /^not sent; withdrawn: /);
    t.notOk((await a.conversationEvents(id)).some((e) => e.type === 'ReplySent'), 'never recorded as sent');
    t.equal(a.sink.received.length, 0, 'no mail reached the sink');
  });
}

/** A reply claimed by a worker that stopped, recovered through the idempotent outbox after its contact was suppressed. */
async function recoverAfterSuppression(t: Test, alreadyInOutbox: boolean) {
  const { events, outbox } = storeAndOutbox(t);
  const ctx = { events };
  await handleCommand(ctx, siteStream('s1'), siteDecider, { type: 'CreateSite', data: { siteId: 's1', teamId: 't1', domain: 'example.com', plan: 'advanced', forwardingToken: 'tok', now: new Date().toISOString() } });
  await handleCommand(ctx, siteStream('s1'), siteDecider, { type: 'ChangeSiteSettings', data: { siteId: 's1', changes: { sendingDomainVerified: true }, now: new Date().toISOString() } });
  await handleCommand(ctx, suppressionStream('t1'), suppressionDecider, { type: 'SuppressContact', data: { teamId: 't1', siteIds: ['s1'], email: 'p@prospect.test', reason: 'bounced', source: 'bounce', now: 2_000 } });
  // The worker that stopped had sent it before the contact bounced, or had not.
  if (alreadyInOutbox) await sendDraft(outbox, GONE_WORKERS_DRAFT, () => null);
  const sender = await recoverGoneWorkersReply(events, outbox);
  await waitFor('the recovery to be recorded', async () => ((await events.readStream(conversationStream('c1'))).length >= 4 ? true : undefined), 5_000);
  await sender.stop();
  // The recovery's record, right after the claim (a status change may follow it).
  return { last: (await events.readStream(conversationStream('c1')))[3]!, outbox };
}

t.test('a recovered attempt the outbox already holds is recorded as sent, though its contact was suppressed since', async (t) => {
  const { last, outbox } = await recoverAfterSuppression(t, true);
  t.equal(last.type, 'ReplySent', 'it was sent before the suppression: the record says so');
  t.equal(outbox.listOutbox({ limit: 10 }).length, 1, 'once');
});

t.test('a recovered attempt the outbox does not hold is withdrawn once its contact is suppressed', async (t) => {
  const { last, outbox } = await recoverAfterSuppression(t, false);
  t.equal(last.type, 'ReplySendFailed');
  t.match(last.data, { retryAt: null, permanent: true, error: /^not sent; withdrawn: the address is on the team's suppression list \(bounced\)$/ });
  t.same(outbox.listOutbox({ limit: 10 }), [], 'nothing in the outbox');
});
