import t from 'tap';
import { bearer, createTenant, startTestApp } from '../helpers/testApp.ts';
import { expectError } from '../helpers/http.ts';
import { MESSAGES, type MessageDoc } from '../../src/readModels/messages.ts';
import { getOpportunity } from '../../src/readModels/opportunities.ts';
import { PITCH, UNACTIONABLE, eventsOfType, ingest, makeAgentReady } from './helpers.ts';

t.test('ingestion: validation, defaults, results and the facts it appends', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const tenant = await createTenant(app.services);
  const { fastify, services } = app;

  t.test('bad input is 400 VALIDATION_ERROR and stores nothing', async (t) => {
    expectError(t, await ingest(fastify, tenant, { from: 'not-an-email' }), 400, 'VALIDATION_ERROR', 'bad email');
    expectError(t, await ingest(fastify, tenant, {}), 400, 'VALIDATION_ERROR', 'missing from');
    const empty = await fastify.inject({ method: 'POST', url: `/api/v1/sites/${tenant.siteId}/outreach/inbox/messages`, headers: { ...bearer(tenant.key), 'content-type': 'application/json' }, payload: '' });
    expectError(t, empty, 400, 'VALIDATION_ERROR', 'an empty body where one is required');
    expectError(t, await ingest(fastify, tenant, { from: 'a@b.io', subject: 42 }), 400, 'VALIDATION_ERROR', 'subject of the wrong type');
    expectError(t, await ingest(fastify, tenant, { from: 'a@b.io', runExtraction: 'yes' }), 400, 'VALIDATION_ERROR', 'runExtraction not a boolean');
    expectError(t, await ingest(fastify, tenant, { from: 'a@b.io', bodyHtml: 7 }), 400, 'VALIDATION_ERROR', 'bodyHtml not a string');
    expectError(t, await ingest(fastify, tenant, { from: 'a@b.io', messageId: ['x'] }), 400, 'VALIDATION_ERROR', 'messageId not a string');
    for (const from of ['a@b', 'a b@x.io', 'a@-x.io', 'a@x..io', '.a@x.io', 'a.@x.io', 'a..b@x.io']) {
      expectError(t, await ingest(fastify, tenant, { from }), 400, 'VALIDATION_ERROR', `from ${JSON.stringify(from)}`);
    }
    // A reply threads onto the Message-Id; the mailer refuses a malformed one, so it is refused here.
    for (const messageId of ['not a message id', 'no-at-sign', '<p1@prospect.io>\r\nBcc: x@evil.test', '<a@b@c>', '<half@open', '<>', '<x\ud800@prospect.io>', '<x@prospect\udfff.io>']) {
      expectError(t, await ingest(fastify, tenant, { from: 'a@b.io', messageId }), 400, 'VALIDATION_ERROR', `messageId ${JSON.stringify(messageId)}`);
    }
    const limit = services.config.INGESTION_BODY_LIMIT_BYTES;
    t.equal(limit, 256 * 1024, 'default body limit is 256 KiB');
    const oversize = await ingest(fastify, tenant, { from: 'a@b.io', bodyText: 'x'.repeat(limit) });
    expectError(t, oversize, 400, 'VALIDATION_ERROR', 'oversize body');
    t.match(oversize.json().error.message, String(limit), 'the message names the limit');
    const justUnder = await ingest(fastify, tenant, { from: 'a@b.io', runExtraction: false, bodyText: 'x'.repeat(limit - 100) });
    t.equal(justUnder.statusCode, 201, 'a body just under the limit is accepted');
    t.equal((await eventsOfType(services, 'MessageIngested')).length, 1, 'only the valid request stored a message');
  });

  t.test('valid addresses beyond the plain ASCII form are accepted: punycode domains, RFC 5322 local-part characters', async (t) => {
    for (const from of ['ivan@xn--e1afmkfd.xn--p1ai', 'a&b@x.com', "o'brien+tag@mail.example.ie", 'x@sub.domain-1.co9', 'first.last@x.io']) {
      const res = await ingest(fastify, tenant, { from, runExtraction: false });
      t.equal(res.statusCode, 201, from);
    }
  });

  t.test('a messageId with surrounding white space is trimmed; an empty one is none', async (t) => {
    const spaced = await ingest(fastify, tenant, { from: 'a@b.io', runExtraction: false, messageId: '  <spaced-1@prospect.io> ' });
    t.equal(spaced.statusCode, 201);
    const empty = await ingest(fastify, tenant, { from: 'a@b.io', runExtraction: false, messageId: '' });
    t.equal(empty.statusCode, 201);
    const messages = await eventsOfType(services, 'MessageIngested');
    const ids = messages.slice(-2).map((e) => (e.data as { externalMessageId?: unknown }));
    t.match(ids[0], { externalMessageId: 'spaced-1@prospect.io' }, 'stored trimmed');
    t.match(ids[1], { externalMessageId: null }, 'stored as none');
  });

  t.test('defaults: subject and bodyText empty, runExtraction true', async (t) => {
    const res = await ingest(fastify, tenant, { from: 'Someone@Example.org' });
    t.equal(res.statusCode, 201);
    const body = res.json();
    t.equal(body.entrySource, 'forwarded_unactionable', 'extraction ran (default true) and found no ask');
    const [message] = (await eventsOfType(services, 'MessageIngested')).slice(-1);
    const data = message!.data as Record<string, unknown>;
    t.equal(data.subject, '');
    t.equal(data.bodyText, '');
    t.equal(data.bodyHtml, null);
  });

  t.test('actionable pitch: one opportunity and conversation per ask, exact response fields', async (t) => {
    const res = await ingest(fastify, tenant, PITCH);
    t.equal(res.statusCode, 201);
    const body = res.json();
    t.same(Object.keys(body).sort(), ['aiPaused', 'conversationIds', 'entrySource', 'ok', 'opportunityIds', 'siteId', 'skipReason']);
    t.equal(body.ok, true);
    t.equal(body.siteId, tenant.siteId);
    t.equal(body.entrySource, 'forwarded_actionable');
    t.equal(body.opportunityIds.length, 1);
    t.equal(body.conversationIds.length, 1);
    const opp = await getOpportunity(services.readModels, body.opportunityIds[0]);
    t.match(opp, {
      targetUrl: 'https://prospect.io/schema-guide',
      anchorText: 'schema markup guide',
      suggestedSentence: 'For the details, see this schema markup guide.',
      sourceUrl: 'https://example.test/blog/seo-tips',
      conversationId: body.conversationIds[0],
      stub: false,
    });
  });

  t.test('two asks give two opportunities, two conversations, one inbound message', async (t) => {
    const res = await ingest(fastify, tenant, {
      from: 'max@linkco.io',
      subject: 'Two link ideas',
      bodyText: [
        'Hi, two link suggestions for your site:',
        '1. In https://example.test/a please link to https://linkco.io/one with anchor text "first tool"',
        '2. In https://example.test/b please link to https://linkco.io/two with anchor text "second tool"',
      ].join('\n'),
    });
    t.equal(res.statusCode, 201);
    const body = res.json();
    t.equal(body.opportunityIds.length, 2);
    t.equal(body.conversationIds.length, 2);
    t.not(body.conversationIds[0], body.conversationIds[1]);
    const created = (await eventsOfType(services, 'OpportunityCreated')).filter((e) => body.opportunityIds.includes((e.data as { opportunityId: string }).opportunityId));
    t.equal(created.length, 2, 'one OpportunityCreated per opportunity');
    const opps = await Promise.all(body.opportunityIds.map((id: string) => getOpportunity(services.readModels, id)));
    t.same(opps.map((o) => [o!.targetUrl, o!.anchorText, o!.sourceUrl]), [
      ['https://linkco.io/one', 'first tool', 'https://example.test/a'],
      ['https://linkco.io/two', 'second tool', 'https://example.test/b'],
    ]);
    const messages = await services.readModels.find<MessageDoc>(MESSAGES, { from: 'max@linkco.io' });
    t.equal(messages.length, 1, 'one inbound message per ingestion');
    t.equal(messages[0]!.direction, 'inbound');
    t.equal(messages[0]!.senderType, 'recipient');
    t.same(messages[0]!.conversationIds, body.conversationIds);
  });

  t.test('unactionable pitch: one stub opportunity', async (t) => {
    const body = (await ingest(fastify, tenant, UNACTIONABLE)).json();
    t.equal(body.entrySource, 'forwarded_unactionable');
    t.equal(body.opportunityIds.length, 1);
    const opp = await getOpportunity(services.readModels, body.opportunityIds[0]);
    t.equal(opp!.stub, true);
  });

  t.test('runExtraction false: direct_inbound_external, no extraction even for a pitch', async (t) => {
    const body = (await ingest(fastify, tenant, { ...PITCH, runExtraction: false })).json();
    t.equal(body.entrySource, 'direct_inbound_external');
    t.equal(body.opportunityIds.length, 1);
    const [message] = (await eventsOfType(services, 'MessageIngested')).slice(-1);
    t.equal((message!.data as { extractor: unknown }).extractor, null);
  });

  t.test('webhook facts carry exactly the spec data fields; a dispatch is recorded in the same append', async (t) => {
    await makeAgentReady(services, tenant.siteId);
    const res = await ingest(fastify, tenant, PITCH);
    const body = res.json();
    t.equal(body.aiPaused, false);
    t.notOk('skipReason' in body, 'no skipReason when not paused');
    const log = await services.events.readAll({ limit: 100_000 });
    const opportunityCreated = log.filter((e) => e.type === 'OpportunityCreated').at(-1)!;
    const messageReceived = log.filter((e) => e.type === 'MessageReceived').at(-1)!;
    const dispatch = log.filter((e) => e.type === 'AgentDispatchRequested').at(-1)!;
    t.same(Object.keys(opportunityCreated.data as object).sort(), ['conversationId', 'entrySource', 'occurredAt', 'opportunityId', 'siteId', 'teamId']);
    t.same(Object.keys(messageReceived.data as object).sort(), ['conversationId', 'entrySource', 'messageId', 'occurredAt', 'opportunityId', 'siteId', 'teamId']);
    t.match(opportunityCreated.data, { opportunityId: body.opportunityIds[0], conversationId: body.conversationIds[0], entrySource: 'forwarded_actionable', siteId: tenant.siteId, teamId: tenant.teamId });
    t.match(dispatch.data, { conversationId: body.conversationIds[0], task: 'triage_and_reply' });
    t.equal(opportunityCreated.streamId, dispatch.streamId, 'every fact of the ingestion is in one stream');
    const stream = await services.events.readStream(dispatch.streamId);
    t.same(stream.map((e) => e.type), ['ConversationOpened', 'OpportunityCreated', 'MessageIngested', 'MessageReceived', 'AgentDispatchRequested', 'IngestionRecorded']);
    t.equal(new Set(stream.map((e) => e.position)).size, stream.length);
    t.equal(stream.at(-1)!.position - stream[0]!.position, BigInt(stream.length - 1), 'written by one append (contiguous positions)');
  });

  t.test('without a key every call is a fresh ingestion', async (t) => {
    const a = (await ingest(fastify, tenant, UNACTIONABLE)).json();
    const b = (await ingest(fastify, tenant, UNACTIONABLE)).json();
    t.not(a.conversationIds[0], b.conversationIds[0]);
  });

  t.test('a credential without inbox:write gets 403 INSUFFICIENT_SCOPE', async (t) => {
    const other = await createTenant(services, { scopes: ['webhooks:read'] });
    expectError(t, await ingest(fastify, other, PITCH), 403, 'INSUFFICIENT_SCOPE');
    expectError(t, await ingest(fastify, { siteId: other.siteId, key: tenant.key }, PITCH), 404, 'SITE_NOT_FOUND', "another team's site");
  });
});
