import t from 'tap';
import { startSmtpSink } from '../agent/smtpSink.ts';
import { ingest, PITCH } from '../ingestion/helpers.ts';
import { connectWithToken, obtainToken, startMcpApp, toolAnswer } from './helpers.ts';

// Each tool against the REST route it mirrors, with the same token, on a real service and a real SMTP sink.
const sink = await startSmtpSink();
t.teardown(() => sink.close());
const ctx = await startMcpApp({ env: { OUTBOUND_SMTP_URL: sink.url } });
t.teardown(() => ctx.app.close());
const { base, tenant } = ctx;
const token = await obtainToken(ctx, { scope: 'inbox:read inbox:write opportunities:read' });
const client = await connectWithToken(ctx.mcpUrl, token);
t.teardown(() => client.close());

const siteId = tenant.siteId;
const first = (await ingest(ctx.app.fastify, tenant, PITCH)).json() as { conversationIds: string[]; opportunityIds: string[] };
const second = (await ingest(ctx.app.fastify, tenant, { ...PITCH, from: 'max@other.io', fromName: 'Max' })).json() as { conversationIds: string[] };
const conversationId = first.conversationIds[0]!;

const call = async (name: string, args: Record<string, unknown>) => toolAnswer(await client.callTool({ name, arguments: { siteId, ...args } }));
const rest = async (path: string) => {
  const res = await fetch(`${base}/api/v1/sites/${siteId}/outreach${path}`, { headers: { authorization: `Bearer ${token}` } });
  return res.json() as Promise<Record<string, any>>;
};

t.test('list_conversations and get_conversation answer what the REST routes answer, filters and paging included', async (t) => {
  const all = await call('list_conversations', {});
  t.equal(all.isError, false);
  t.equal(all.body.conversations.length, 2);
  t.same(all.body, await rest('/conversations'));
  const page = await call('list_conversations', { limit: 1 });
  t.equal(page.body.hasMore, true);
  const next = await call('list_conversations', { limit: 1, cursor: page.body.nextCursor });
  t.equal(next.body.conversations[0].id, all.body.conversations[1].id, 'the cursor leads to the next page');
  const byContact = await call('list_conversations', { contactEmail: 'MAX@other.io' });
  t.same(byContact.body.conversations.map((c: { id: string }) => c.id), second.conversationIds, 'contactEmail matched however written');
  t.same(byContact.body, await rest('/conversations?contactEmail=MAX%40other.io'));
  const since = await call('list_conversations', { createdAfter: '2000-01-01T00:00:00+02:00' });
  t.equal(since.body.conversations.length, 2, 'ISO timestamps with an offset');
  const beyond = await call('list_conversations', { createdBefore: '9999-12-31T23:59:59-23:59' });
  t.equal(beyond.isError, true, 'an offset carrying the instant past year 9999 is refused, as in REST');
  t.equal(beyond.body.error.code, 'VALIDATION_ERROR');

  const detail = await call('get_conversation', { conversationId });
  t.equal(detail.isError, false);
  t.equal(detail.body.conversation.messages.length, 1);
  t.same(detail.body, await rest(`/conversations/${conversationId}`));
});

t.test('list_opportunities and get_opportunity', async (t) => {
  const list = await call('list_opportunities', {});
  t.same(list.body, await rest('/opportunities'));
  t.equal(list.body.opportunities.length, 2);
  const stubs = await call('list_opportunities', { stub: true });
  t.same(stubs.body, await rest('/opportunities?stub=true'));
  const pitches = await call('list_opportunities', { kind: 'inbound_pitch' });
  t.same(pitches.body, await rest('/opportunities?kind=inbound_pitch'), 'the kind filter, as REST');
  t.equal(pitches.body.opportunities.length, 2);
  const proposals = await call('list_opportunities', { kind: 'interlinking' });
  t.same(proposals.body, await rest('/opportunities?kind=interlinking'));
  t.equal(proposals.body.opportunities.length, 0, 'no agent proposed anything');
  const one = await call('get_opportunity', { opportunityId: first.opportunityIds[0] });
  t.same(one.body, await rest(`/opportunities/${first.opportunityIds[0]}`));
});

t.test('take_over, hand_back, mark read/unread and change_conversation_status act as a person and answer the new state', async (t) => {
  const taken = await call('take_over_conversation', { conversationId });
  t.same(taken, { isError: false, body: { conversation: { id: conversationId, status: 'open', handledBy: 'human', unread: true } } });
  const again = await call('take_over_conversation', { conversationId });
  const restAgain = await fetch(`${base}/api/v1/sites/${siteId}/outreach/conversations/${conversationId}/takeover`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  t.same(again.body, await restAgain.json(), 'taking over again answers what REST answers');
  const back = await call('hand_back_conversation', { conversationId });
  t.equal(back.body.conversation.handledBy, 'agent');
  t.equal((await call('mark_conversation_read', { conversationId })).body.conversation.unread, false);
  t.equal((await call('mark_conversation_unread', { conversationId })).body.conversation.unread, true);
  // The description names the statuses the input takes (an assistant follows it).
  const listed = (await client.listTools()).tools.find((tool) => tool.name === 'change_conversation_status')!;
  const statuses = (listed.inputSchema.properties!['status'] as { enum: string[] }).enum;
  for (const status of statuses) t.match(listed.description, status, `the description names ${status}`);
  t.notMatch(listed.description, /\b(won|lost|closed)\b.*\(/, 'no status the input refuses is offered as one');
  const resolved = await call('change_conversation_status', { conversationId, status: 'resolved', resolutionOutcome: 'link_added' });
  t.equal(resolved.body.conversation.status, 'resolved');
  const detail = await rest(`/conversations/${conversationId}`);
  t.match(detail.conversation.statusHistory.at(-1), { to: 'resolved', outcome: 'link_added' });
});

t.test('reply_to_conversation sends through the SMTP sink; an idempotency key makes a retry answer the first reply', async (t) => {
  const id = second.conversationIds[0]!;
  const sent = await call('reply_to_conversation', { conversationId: id, text: 'Hi Max, happy to add it.', idempotencyKey: 'mcp-reply-1' });
  t.equal(sent.isError, false, JSON.stringify(sent.body));
  t.match(sent.body.message, { id: /^[0-9A-Z]{26}$/, deliveryStatus: 'sent' });
  t.equal(sink.received.length, 1, 'one mail at the sink');
  const retried = await call('reply_to_conversation', { conversationId: id, text: 'Hi Max, happy to add it.', idempotencyKey: 'mcp-reply-1' });
  t.equal(retried.body.message.id, sent.body.message.id, 'the same reply');
  t.equal(sink.received.length, 1, 'not sent twice');
  const other = await call('reply_to_conversation', { conversationId: id, text: 'Something else.', idempotencyKey: 'mcp-reply-1' });
  t.equal(other.body.error?.code, 'IDEMPOTENCY_KEY_REUSED', 'another text under the key: the REST code');
  const detail = await rest(`/conversations/${id}`);
  t.equal(detail.conversation.messages.at(-1).senderType, 'user');
});
