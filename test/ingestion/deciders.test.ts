import t from 'tap';
import { DEFAULT_AGENT_SETTINGS, agentsDecider } from '../../src/domain/agents.ts';
import { type IngestionCommand, type IngestionEvent, IngestionRuleError, ingestionDecider } from '../../src/domain/ingestion.ts';
import { suppressionDecider } from '../../src/domain/suppression.ts';
import { given } from '../helpers/givenWhenThen.ts';

const NOW = Date.parse('2026-06-01T10:00:00.000Z');
const base = { siteId: 'S', teamId: 'T', occurredAt: NOW };
const message = { from: 'jane@p.io', fromName: null, subject: 's', bodyText: 'b', bodyHtml: null, messageId: '<m1@p.io>', inReplyTo: null, references: null };
const command = (over: Partial<IngestionCommand['data']> = {}): IngestionCommand => ({
  type: 'IngestMessage',
  data: {
    ingestionId: 'I',
    siteId: 'S',
    teamId: 'T',
    channel: 'api',
    message,
    extraction: { ran: true, extractor: 'offline', asks: [] },
    thread: null,
    pause: { aiPaused: false },
    ids: ['M', 'C1', 'O1', 'D1'],
    now: NOW,
    requestHash: 'H',
    ...over,
  },
});

t.test('an unactionable ingestion: stub opportunity, conversation, message, dispatch, recorded result', async (t) => {
  const response = { ok: true as const, siteId: 'S', conversationIds: ['C1'], opportunityIds: ['O1'], entrySource: 'forwarded_unactionable' as const, aiPaused: false };
  const expected: IngestionEvent[] = [
    {
      type: 'ConversationOpened',
      data: { ...base, conversationId: 'C1', opportunityId: 'O1', entrySource: 'forwarded_unactionable', status: 'open', contactEmail: 'jane@p.io', contactName: null, subject: 's', ask: null, aiPaused: false, skipReason: null },
    },
    { type: 'OpportunityCreated', data: { ...base, opportunityId: 'O1', conversationId: 'C1', entrySource: 'forwarded_unactionable' } },
    {
      type: 'MessageIngested',
      data: {
        ...base, from: 'jane@p.io', fromName: null, subject: 's', bodyText: 'b', bodyHtml: null, inReplyTo: null, references: null,
        externalMessageId: 'm1@p.io', ingestionId: 'I', messageId: 'M', conversationIds: ['C1'], opportunityIds: ['O1'],
        entrySource: 'forwarded_unactionable', direction: 'inbound', senderType: 'recipient', channel: 'api', threaded: false,
        extractor: 'offline', aiPaused: false, skipReason: null,
      },
    },
    { type: 'MessageReceived', data: { ...base, conversationId: 'C1', opportunityId: 'O1', messageId: 'M', entrySource: 'forwarded_unactionable' } },
    { type: 'AgentDispatchRequested', data: { ...base, dispatchId: 'D1', conversationId: 'C1', messageId: 'M', task: 'triage_and_reply' } },
    { type: 'IngestionRecorded', data: { ...base, ingestionId: 'I', status: 201, response, requestHash: 'H' } },
  ];
  const state = given(ingestionDecider, []).when(command()).then(expected);
  t.same(state.last, { response, recordedAt: NOW, siteId: 'S', requestHash: 'H' });
});

t.test('paused: skipReason in the result, no dispatch', async (t) => {
  const events = ingestionDecider.decide(command({ pause: { aiPaused: true, skipReason: 'auto_reply_disabled' } }), ingestionDecider.initialState());
  t.notOk(events.some((e) => e.type === 'AgentDispatchRequested'));
  t.match(events.at(-1)!.data, { response: { aiPaused: true, skipReason: 'auto_reply_disabled' } });
});

t.test('a thread: only MessageIngested, MessageReceived, dispatch and the record', async (t) => {
  const events = ingestionDecider.decide(
    command({ thread: { conversationId: 'C0', opportunityId: 'O0', entrySource: 'forwarded_actionable' }, ids: ['M', 'D1'] }),
    ingestionDecider.initialState(),
  );
  t.same(events.map((e) => e.type), ['MessageIngested', 'MessageReceived', 'AgentDispatchRequested', 'IngestionRecorded']);
  t.match(events[1]!.data, { conversationId: 'C0', opportunityId: 'O0', entrySource: 'forwarded_actionable' });
});

t.test('a keyed stream refuses a second ingestion within 24 hours, accepts one after', async (t) => {
  const first = ingestionDecider.decide(command(), ingestionDecider.initialState());
  given(ingestionDecider, first).when(command({ now: NOW + 24 * 3600_000 - 1 })).thenThrows(IngestionRuleError, /already has a result/);
  const later = ingestionDecider.decide(command({ now: NOW + 24 * 3600_000 }), first.reduce(ingestionDecider.evolve, ingestionDecider.initialState()));
  t.equal(later.at(-1)!.type, 'IngestionRecorded');
});

t.test('agents: configure once, an unchanged setting appends nothing', async (t) => {
  const configured = given(agentsDecider, [])
    .when({ type: 'ConfigureAgent', data: { siteId: 'S', agentKey: 'outreach', changes: { active: true }, now: 'x' } })
    .then([{ type: 'AgentConfigured', data: { siteId: 'S', agentKey: 'outreach', changes: { active: true }, configuredAt: 'x' } }]);
  t.same(configured.outreach, { ...DEFAULT_AGENT_SETTINGS, active: true });
  given(agentsDecider, [{ type: 'AgentConfigured', data: { siteId: 'S', agentKey: 'outreach', changes: { active: true }, configuredAt: 'x' } }])
    .when({ type: 'ConfigureAgent', data: { siteId: 'S', agentKey: 'outreach', changes: { active: true, autoReply: true }, now: 'y' } })
    .then([]);
});

t.test('suppression: same or weaker reason is nothing new; a stronger reason is an upgrade', async (t) => {
  const cmd = (reason: string) => ({ type: 'SuppressContact' as const, data: { teamId: 'T', siteIds: ['S1', 'S2'], email: 'A@B.io', reason, source: 'cli', now: NOW } });
  const first = given(suppressionDecider, []).when(cmd('opted_out'));
  const events = suppressionDecider.decide(cmd('opted_out'), suppressionDecider.initialState());
  first.then([
    { type: 'ContactSuppressed', data: { siteId: 'S1', teamId: 'T', occurredAt: NOW, email: 'a@b.io', reason: 'opted_out', source: 'cli', upgraded: false } },
    { type: 'ContactSuppressed', data: { siteId: 'S2', teamId: 'T', occurredAt: NOW, email: 'a@b.io', reason: 'opted_out', source: 'cli', upgraded: false } },
  ]);
  given(suppressionDecider, events).when(cmd('opted_out')).then([]);
  t.match(suppressionDecider.decide(cmd('bounced'), events.reduce(suppressionDecider.evolve, suppressionDecider.initialState()))[0]!.data, { upgraded: true, reason: 'bounced' });
  // A weaker reason than the one on record (bounced > opted_out > manual) changes nothing.
  const bounced = [...events, ...suppressionDecider.decide(cmd('bounced'), events.reduce(suppressionDecider.evolve, suppressionDecider.initialState()))];
  given(suppressionDecider, bounced).when(cmd('opted_out')).then([]);
  given(suppressionDecider, bounced).when(cmd('manual')).then([]);
  t.match(suppressionDecider.decide(cmd('complained'), bounced.reduce(suppressionDecider.evolve, suppressionDecider.initialState()))[0]!.data, { upgraded: true, reason: 'complained' });
});
