import t from 'tap';
import { handleCommand } from '../../src/commands/handleCommand.ts';
import { conversationDecider, conversationStream } from '../../src/domain/conversation.ts';
import { withDraftHash } from '../../src/domain/outreachAgent.ts';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { settle } from '../helpers/http.ts';
import { act } from './actionsHelpers.ts';
import type { Services } from '../../src/services.ts';

async function coldPitch(services: Services, a: { siteId: string; teamId: string }): Promise<string> {
  const id = services.newId();
  const messageId = services.newId();
  const ref = { conversationId: id, siteId: a.siteId, teamId: a.teamId, now: Date.now() };
  const draft = withDraftHash({
    messageId,
    rfcMessageId: `<reply.${messageId.toLowerCase()}@example.test>`,
    from: { name: null, address: 'outreach@example.test' },
    to: { name: 'Jane', address: 'jane@prospect.io' },
    subject: 'A link for your article',
    bodyText: 'Hello',
    inReplyTo: null,
    references: [],
    returnPath: null,
    drafter: 'pitch-template-v1',
  });
  await handleCommand(services, conversationStream(id), conversationDecider, {
    type: 'StartOutboundConversation',
    data: { ...ref, opportunityId: services.newId(), contactName: 'Jane', prospectUrl: 'https://prospect.io/post', offeredUrl: null, runId: services.newId(), draft },
  });
  await handleCommand(services, conversationStream(id), conversationDecider, {
    type: 'RecordSendResult',
    data: { ...ref, messageId, attempt: 1, result: { ok: true, mailProviderMessageId: 'x' } },
  });
  await settle(services);
  return id;
}

/**
 * A conversation the Outreach Agent opened with a cold pitch (OutboundConversationStarted, as
 * src/agentWork/outreach.ts records it) is listed read; marking it unread records the mark (it was
 * taken for a repeat, 200 with `unread: false`, in the dashboard too).
 */
t.test('POST unread on a conversation the agent opened with a cold pitch', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const a = await createTenant(app.services, { sendingDomainVerified: true });
  const id = await coldPitch(app.services, a);
  const res = await act(app.fastify, a, id, 'unread');
  t.equal(res.statusCode, 200);
  t.equal(res.json().conversation.unread, true, 'the answer says unread after "mark unread"');
  const types = (await app.services.events.readStream(conversationStream(id))).map((e) => e.type);
  t.ok(types.includes('ConversationMarkedUnread'), `ConversationMarkedUnread recorded (stream: ${types.join(',')})`);

  t.equal((await act(app.fastify, a, id, 'read')).json().conversation.unread, false, 'and read again');
  t.equal((await act(app.fastify, a, id, 'unread')).json().conversation.unread, true);
});
