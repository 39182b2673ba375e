import t from 'tap';
import { handleCommand } from '../../src/commands/handleCommand.ts';
import { conversationDecider, conversationStream } from '../../src/domain/conversation.ts';
import { withDraftHash } from '../../src/domain/outreachAgent.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { anotherSite, expectError, keyWith, settle } from '../helpers/http.ts';
import { PITCH, ingest } from '../ingestion/helpers.ts';
import { ACTIONS, act, bodyOf } from './actionsHelpers.ts';

const app = await startTestApp();
t.teardown(() => app.close());
const a = await createTenant(app.services, { sendingDomainVerified: true });
const b = await createTenant(app.services);

async function conversationOn(siteId: string, messageId: string): Promise<string> {
  const res = await ingest(app.fastify, { siteId, key: a.key }, { ...PITCH, messageId });
  if (res.statusCode !== 201) throw new Error(`ingestion failed: ${res.statusCode} ${res.body}`);
  return res.json().conversationIds[0];
}

t.test('401 without a credential, 403 with inbox:read only, on every action', async (t) => {
  const id = await conversationOn(a.siteId, '<access-1@prospect.io>');
  const readOnly = await keyWith(app.services, a.teamId, ['inbox:read']);
  for (const action of ACTIONS) {
    expectError(t, await act(app.fastify, { siteId: a.siteId, key: null }, id, action), 401, 'UNAUTHORIZED', `${action} without a credential`);
    expectError(t, await act(app.fastify, { siteId: a.siteId, key: `svc_${'0'.repeat(64)}` }, id, action), 401, 'UNAUTHORIZED', `${action} unknown key`);
    const refused = await act(app.fastify, { siteId: a.siteId, key: readOnly.key }, id, action);
    expectError(t, refused, 403, 'INSUFFICIENT_SCOPE', `${action} with inbox:read`);
    t.match(refused.json().error.message, /inbox:write/);
  }
  t.same((await app.services.events.readStream(conversationStream(id))).length, 0, 'nothing was recorded');
});

t.test("404: another team's key, a key restricted to another site, a conversation of another site, an unknown conversation", async (t) => {
  const id = await conversationOn(a.siteId, '<access-2@prospect.io>');
  const second = await anotherSite(app.services, a.teamId);
  const onSecond = await conversationOn(second, '<access-3@prospect.io>');
  const restricted = await keyWith(app.services, a.teamId, ['inbox:read', 'inbox:write'], second);
  for (const action of ACTIONS) {
    expectError(t, await act(app.fastify, { siteId: a.siteId, key: b.key }, id, action), 404, 'SITE_NOT_FOUND', `${action}: team B's key`);
    expectError(t, await act(app.fastify, { siteId: a.siteId, key: restricted.key }, id, action), 404, 'SITE_NOT_FOUND', `${action}: key restricted to another site`);
    expectError(t, await act(app.fastify, { siteId: a.siteId, key: a.key }, onSecond, action), 404, 'NOT_FOUND', `${action}: the conversation of another site`);
    expectError(t, await act(app.fastify, { siteId: second, key: restricted.key }, id, action), 404, 'NOT_FOUND', `${action}: the restricted key, site A's conversation`);
    expectError(t, await act(app.fastify, { siteId: a.siteId, key: a.key }, '01ARZ3NDEKTSV4RRFFQ69G5FAV', action), 404, 'NOT_FOUND', `${action}: unknown id`);
    expectError(t, await act(app.fastify, { siteId: a.siteId, key: a.key }, 'not-an-id', action), 404, 'NOT_FOUND', `${action}: malformed id`);
    expectError(t, await act(app.fastify, { siteId: a.siteId, key: a.key }, 'x'.repeat(101), action), 404, 'NOT_FOUND', `${action}: an id of 101 characters`);
  }
  t.equal((await act(app.fastify, { siteId: second, key: restricted.key }, onSecond, 'read')).statusCode, 200, 'the restricted key acts on its site');
  t.same((await app.services.events.readStream(conversationStream(id))).length, 0, "nothing was recorded on site A's conversation");
});

t.test('400 for invalid bodies', async (t) => {
  const id = await conversationOn(a.siteId, '<access-4@prospect.io>');
  const cases: Array<[string, 'reply' | 'status', object]> = [
    ['empty text', 'reply', { text: '' }],
    ['blank text', 'reply', { text: '   ' }],
    ['text over 20 000 characters', 'reply', { text: 'x'.repeat(20_001) }],
    ['a two-line subject', 'reply', { text: 'hi', subject: 'a\r\nBcc: x@y.z' }],
    ...['\n', '\v', '\f', '\u0085', '\u2028', '\u2029'].map(
      (lineBreak): [string, 'reply', object] => [`a subject broken by U+${lineBreak.charCodeAt(0).toString(16).padStart(4, '0')}`, 'reply', { text: 'hi', subject: `a${lineBreak}b` }],
    ),
    ['unknown status', 'status', { status: 'closed' }],
    ['resolutionOutcome over 64 characters', 'status', { status: 'resolved', resolutionOutcome: 'x'.repeat(65) }],
  ];
  for (const [name, action, body] of cases) expectError(t, await act(app.fastify, a, id, action, body), 400, 'VALIDATION_ERROR', name);
});

t.test('409 REPLY_IN_FLIGHT: no status change and no second reply while a reply is being sent', async (t) => {
  const id = await conversationOn(a.siteId, '<access-5@prospect.io>');
  // Another process has claimed a send and not recorded its outcome yet.
  const ref = { conversationId: id, siteId: a.siteId, teamId: a.teamId, now: Date.now() };
  const draft = withDraftHash({
    messageId: '01JZZZZZZZZZZZZZZZZZZZZZZZ',
    rfcMessageId: '<reply.inflight@example.test>',
    from: { name: null, address: 'outreach@example.test' },
    to: { name: null, address: 'jane@prospect.io' },
    subject: 'Re: x',
    bodyText: 'in flight',
    inReplyTo: null,
    references: [],
    returnPath: null,
    drafter: 'user',
  });
  await handleCommand(app.services, conversationStream(id), conversationDecider, { type: 'StartReply', data: { ...ref, draft } });
  await settle(app.services);
  for (const status of ['resolved', 'declined', 'awaiting_human'] as const) {
    expectError(t, await act(app.fastify, a, id, 'status', { status }), 409, 'REPLY_IN_FLIGHT', status);
  }
  expectError(t, await act(app.fastify, a, id, 'reply', bodyOf('reply')), 409, 'REPLY_IN_FLIGHT', 'a second reply');
  t.equal((await act(app.fastify, a, id, 'takeover')).statusCode, 200, 'taking over is still possible');
  t.equal((await act(app.fastify, a, id, 'status', { status: 'open' })).statusCode, 200, 'asking for the status it has is no change');
});
