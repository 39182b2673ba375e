import t from 'tap';
import { ingest, PITCH } from '../ingestion/helpers.ts';
import { webhooksPath } from '../helpers/http.ts';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';

/**
 * Two identical writes at once: the second finds the first's event in the log and appends nothing.
 * Its answer must still show the first's change ("a successful write is visible to the next read"),
 * so it waits, as the first does, for the read models to include the event it was decided on.
 * The projections are held back here to make the read models lag as they do under load.
 */
const app = await startTestApp({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '1000' } });
t.teardown(() => app.close());
const tenant = await createTenant(app.services, { plan: 'advanced', sendingDomainVerified: true });
const site = `/api/v1/sites/${tenant.siteId}`;
const call = (method: 'POST' | 'PATCH' | 'PUT', url: string, payload: object, headers: Record<string, string> = {}) =>
  app.fastify.inject({ method, url, headers: { ...bearer(tenant.key), ...headers }, payload });

/** Sends `request` twice: the second once the first's event is stored while the read models lag; both answers. */
async function twiceWhileBehind(request: () => ReturnType<typeof call>) {
  await app.services.projections.stop();
  const head = await app.services.events.headPosition();
  const first = request();
  while ((await app.services.events.headPosition()) === head) await new Promise((resolve) => setTimeout(resolve, 5));
  const second = request();
  let secondAnswered = false;
  void second.then(() => (secondAnswered = true));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const answeredWhileBehind = secondAnswered;
  app.services.projections.start();
  return { first: await first, second: await second, answeredWhileBehind };
}

t.test('a conversation status already changed by a concurrent request: answered with the new status', async (t) => {
  const conversationId = (await ingest(app.fastify, tenant, { ...PITCH, messageId: '<in-effect@prospect.io>' })).json().conversationIds[0] as string;
  const { first, second, answeredWhileBehind } = await twiceWhileBehind(() => call('POST', `${site}/outreach/conversations/${conversationId}/status`, { status: 'resolved' }));
  t.notOk(answeredWhileBehind, 'the second waited for the read models');
  t.equal(first.json().conversation.status, 'resolved');
  t.equal(second.statusCode, 200);
  t.equal(second.json().conversation.status, 'resolved', 'not the status before the first request');
});

t.test('a suppression just added by a concurrent request: 200 with it, not 404', async (t) => {
  const { first, second, answeredWhileBehind } = await twiceWhileBehind(() => call('POST', `${site}/outreach/suppressions`, { email: 'twice@prospect.io', reason: 'manual' }));
  t.notOk(answeredWhileBehind);
  t.equal(first.statusCode, 201);
  t.equal(second.statusCode, 200, 'already listed');
  t.equal(second.json().suppression.email, 'twice@prospect.io');
});

t.test('a webhook label just changed by a concurrent request: answered with the new label', async (t) => {
  const created = await call('POST', webhooksPath(tenant.siteId), { label: 'before', url: 'https://example.com/hook', eventTypes: ['outreach.reply_sent'] });
  const id = created.json().subscription.id as string;
  const { second, answeredWhileBehind } = await twiceWhileBehind(() => call('PATCH', `${webhooksPath(tenant.siteId)}/${id}`, { label: 'after' }));
  t.notOk(answeredWhileBehind);
  t.equal(second.json().subscription.label, 'after');
});

t.test("an agent's setting just changed by a concurrent request: answered with the new value", async (t) => {
  t.equal((await call('PUT', `${site}/agents/ai_prompt`, { isActive: false })).json().agent.isActive, false);
  const { second, answeredWhileBehind } = await twiceWhileBehind(() => call('PUT', `${site}/agents/ai_prompt`, { isActive: true }));
  t.notOk(answeredWhileBehind);
  t.equal(second.json().agent.isActive, true);
});

t.test('a reply repeated with its Idempotency-Key while the first is being answered: the repeat waits too', async (t) => {
  const conversationId = (await ingest(app.fastify, tenant, { ...PITCH, messageId: '<reply-twice@prospect.io>' })).json().conversationIds[0] as string;
  const reply = () => call('POST', `${site}/outreach/conversations/${conversationId}/reply`, { text: 'Thanks, a person here.' }, { 'idempotency-key': 'reply-twice' });
  const { first, second, answeredWhileBehind } = await twiceWhileBehind(reply);
  t.notOk(answeredWhileBehind, 'the repeat waited for the read models');
  t.equal(first.statusCode, 201);
  t.equal(second.statusCode, 200, 'a repeat');
  t.equal(second.json().message.id, first.json().message.id);
  t.same(second.json().conversation, first.json().conversation, 'the same conversation state as the first answer');
});
