import t from 'tap';
import { createTenant, startTestApp } from '../helpers/testApp.ts';
import { getConversation } from '../../src/readModels/conversations.ts';
import { PITCH, ingest } from './helpers.ts';

t.test('threading by In-Reply-To and References', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const { fastify, services } = app;
  const tenant = await createTenant(services);
  const log = async () => services.events.readAll({ limit: 100_000 });

  const original = await ingest(fastify, tenant, { ...PITCH, messageId: '<pitch-1@prospect.io>' });
  t.equal(original.statusCode, 201);
  const conv = original.json().conversationIds[0];
  const opp = original.json().opportunityIds[0];

  t.test('In-Reply-To names a known message: the reply joins its conversation', async (t) => {
    const head = await services.events.headPosition();
    const reply = await ingest(fastify, tenant, {
      from: 'jane@prospect.io',
      subject: 'Re: Quick link suggestion',
      bodyText: 'Just following up on my link suggestion https://prospect.io/other',
      messageId: '<reply-1@prospect.io>',
      inReplyTo: '<pitch-1@prospect.io>',
    });
    t.equal(reply.statusCode, 201);
    t.same(reply.json().conversationIds, [conv], 'the existing conversation');
    t.same(reply.json().opportunityIds, [opp], 'its opportunity');
    t.equal(reply.json().entrySource, 'forwarded_actionable', "the conversation's entry source");
    const appended = (await log()).filter((e) => e.position > head && e.type !== 'ApiKeyUsed');
    const webhookFacts = appended.filter((e) => e.type === 'OpportunityCreated' || e.type === 'MessageReceived');
    t.same(webhookFacts.map((e) => e.type), ['MessageReceived'], 'only outreach.message_received is emitted');
    t.match(webhookFacts[0]!.data, { conversationId: conv, opportunityId: opp });
    t.notOk(appended.some((e) => e.type === 'ConversationOpened'), 'no conversation opened');
    const doc = await getConversation(services.readModels, conv);
    t.equal(doc!.messageCount, 2);
  });

  t.test('References (a chain, newest last) names a known message', async (t) => {
    const reply = await ingest(fastify, tenant, {
      from: 'jane@prospect.io',
      subject: 'Re: Re: Quick link suggestion',
      messageId: '<reply-2@prospect.io>',
      inReplyTo: '<unknown@elsewhere>',
      references: '<pitch-1@prospect.io>\r\n <reply-1@prospect.io>',
    });
    t.same(reply.json().conversationIds, [conv]);
  });

  t.test('References alone, bare ids without brackets', async (t) => {
    const reply = await ingest(fastify, tenant, { from: 'jane@prospect.io', references: 'reply-2@prospect.io' });
    t.same(reply.json().conversationIds, [conv]);
  });

  t.test('unknown ids, or ids of another site, open new conversations', async (t) => {
    const unknown = await ingest(fastify, tenant, { ...PITCH, inReplyTo: '<never-seen@x>', references: '<also-unknown@x>' });
    t.not(unknown.json().conversationIds[0], conv);
    const neighbour = await createTenant(services);
    const foreign = await ingest(fastify, neighbour, { ...PITCH, inReplyTo: '<pitch-1@prospect.io>' });
    t.equal(foreign.statusCode, 201);
    t.not(foreign.json().conversationIds[0], conv, "another site's message never threads");
  });
});
