import t from 'tap';
import { bearer } from '../helpers/testApp.ts';
import { expectError } from '../helpers/http.ts';
import { act } from '../inbox/actionsHelpers.ts';
import { startAgentHarness } from '../agent/helpers.ts';

/**
 * A write body with a field its route does not take is refused, naming the field, and changes
 * nothing: ignored, a mistyped `subjet` would mail the prospect another subject, `active: false`
 * would create a live subscription the client thinks is off.
 */
t.test('write bodies refuse a field they do not take with 400 VALIDATION_ERROR naming it, and nothing happens', async (t) => {
  const a = await startAgentHarness({ ready: false });
  t.teardown(() => a.close());
  const { fastify, services } = a.h.app;
  const tenant = a.h.tenant;
  const site = `/api/v1/sites/${tenant.siteId}`;
  const { conversationIds } = await a.pitch();
  const conversationId = conversationIds[0]!;
  const eventCount = async () => (await services.events.readAll({ limit: 100_000 })).length;
  const before = await eventCount();
  const mailsBefore = a.sink.received.length;

  const refused = async (what: string, field: string, send: () => Promise<{ statusCode: number; json(): any }>) => {
    const res = await send();
    expectError(t, res as never, 400, 'VALIDATION_ERROR', what);
    t.match(res.json().error.message, `"${field}"`, `${what}: the message names "${field}"`);
  };
  await refused('reply', 'subjet', () => act(fastify, tenant, conversationId, 'reply', { text: 'Hello.', subjet: 'Our rates' }));
  await refused('status', 'reason', () => act(fastify, tenant, conversationId, 'status', { status: 'resolved', reason: 'spam' }));
  await refused('webhook create', 'active', () =>
    fastify.inject({ method: 'POST', url: `${site}/outreach/webhooks`, headers: bearer(tenant.key), payload: { label: 'off', url: 'https://hooks.example.com/x', eventTypes: ['outreach.reply_sent'], active: false } }),
  );
  await refused('suppression add', 'reasons', () =>
    fastify.inject({ method: 'POST', url: `${site}/outreach/suppressions`, headers: bearer(tenant.key), payload: { email: 'x@y.test', reasons: 'complained' } }),
  );
  t.equal(await eventCount(), before, 'no event was appended');
  t.equal(a.sink.received.length, mailsBefore, 'no mail was sent');

  // The same bodies without the stray field are accepted.
  t.equal((await act(fastify, tenant, conversationId, 'reply', { text: 'Hello.', subject: 'Our rates' })).statusCode, 201);
  t.equal((await act(fastify, tenant, conversationId, 'status', { status: 'resolved' })).statusCode, 200);
  t.equal((await fastify.inject({ method: 'POST', url: `${site}/outreach/suppressions`, headers: bearer(tenant.key), payload: { email: 'x@y.test' } })).statusCode, 201);
});

t.test('a route that takes no body refuses one with a field (it ran the action and ignored it), and a status that emits no event refuses a resolutionOutcome', async (t) => {
  const a = await startAgentHarness({ ready: false });
  t.teardown(() => a.close());
  const { fastify, services } = a.h.app;
  const tenant = a.h.tenant;
  const site = `/api/v1/sites/${tenant.siteId}`;
  const { conversationIds } = await a.pitch();
  const conversationId = conversationIds[0]!;
  const created = await fastify.inject({ method: 'POST', url: `${site}/outreach/webhooks`, headers: bearer(tenant.key), payload: { label: 'x', url: 'https://hooks.example.com/x', eventTypes: ['outreach.reply_sent'] } });
  const subscriptionId = created.json().subscription.id as string;
  const eventCount = async () => (await services.events.readAll({ limit: 100_000 })).length;
  const before = await eventCount();

  const cases: Array<[string, () => Promise<{ statusCode: number; json(): any }>]> = [
    ['agent run with a field', () => fastify.inject({ method: 'POST', url: `${site}/agents/interlinking/run`, headers: bearer(tenant.key), payload: { foo: 1 } })],
    ['read with a field', () => act(fastify, tenant, conversationId, 'read', { x: 1 })],
    ['takeover with a field', () => act(fastify, tenant, conversationId, 'takeover', { bogus: 1 })],
    ['handback with an array', () => act(fastify, tenant, conversationId, 'handback', [1, 2, 3])],
    ['webhook delete with a field', () => fastify.inject({ method: 'DELETE', url: `${site}/outreach/webhooks/${subscriptionId}`, headers: bearer(tenant.key), payload: { x: 1 } })],
    ['suppression delete with a field', () => fastify.inject({ method: 'DELETE', url: `${site}/outreach/suppressions/x%40y.test`, headers: bearer(tenant.key), payload: { x: 1 } })],
    // A JSON null is a body, not none (the action ran).
    ['takeover with null', () => fastify.inject({ method: 'POST', url: `${site}/outreach/conversations/${conversationId}/takeover`, headers: { ...bearer(tenant.key), 'content-type': 'application/json' }, payload: 'null' })],
    ['webhook delete with null', () => fastify.inject({ method: 'DELETE', url: `${site}/outreach/webhooks/${subscriptionId}`, headers: { ...bearer(tenant.key), 'content-type': 'application/json' }, payload: 'null' })],
    ['reopen with an outcome', () => act(fastify, tenant, conversationId, 'status', { status: 'open', resolutionOutcome: 'won' })],
  ];
  for (const [what, send] of cases) expectError(t, (await send()) as never, 400, 'VALIDATION_ERROR', what);
  t.equal(await eventCount(), before, 'nothing happened');

  t.equal((await act(fastify, tenant, conversationId, 'read', {})).statusCode, 200, 'an empty object is no field');
  const emptyText = await fastify.inject({ method: 'POST', url: `${site}/outreach/conversations/${conversationId}/unread`, headers: { ...bearer(tenant.key), 'content-type': 'text/plain' }, payload: '' });
  t.equal(emptyText.statusCode, 200, "an empty text/plain body (fetch's body: '') is none");
  const chunkedNone = await fastify.inject({ method: 'POST', url: `${site}/outreach/conversations/${conversationId}/read`, headers: { ...bearer(tenant.key), 'transfer-encoding': 'chunked' }, payload: '' });
  t.equal(chunkedNone.statusCode, 200, 'an empty chunked body without a Content-Type (a client\'s DELETE) is none');
  expectError(t, await fastify.inject({ method: 'POST', url: `${site}/outreach/conversations/${conversationId}/read`, headers: { ...bearer(tenant.key), 'transfer-encoding': 'chunked' }, payload: '{}' }) as never, 400, 'VALIDATION_ERROR', 'a body without a Content-Type is still refused');
  expectError(t, await fastify.inject({ method: 'POST', url: `${site}/outreach/conversations/${conversationId}/read`, headers: { ...bearer(tenant.key), 'content-type': 'application/xml' }, payload: '<a/>' }) as never, 400, 'VALIDATION_ERROR', 'and one of another type');
  t.equal((await fastify.inject({ method: 'DELETE', url: `${site}/outreach/webhooks/${subscriptionId}`, headers: bearer(tenant.key) })).statusCode, 200, 'nor is no body');
});
