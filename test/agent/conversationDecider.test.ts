import t from 'tap';
import {
  type ConversationEvent,
  type ReplyDraft,
  ConversationRuleError,
  conversationDecider,
} from '../../src/domain/conversation.ts';
import { foldCost } from '../helpers/foldCost.ts';
import { given } from '../helpers/givenWhenThen.ts';

const ref = { conversationId: 'c1', siteId: 's1', teamId: 't1', now: 1_000 };
const base = { conversationId: 'c1', siteId: 's1', teamId: 't1', occurredAt: 1_000 };
const draft: ReplyDraft = {
  messageId: 'm-out',
  rfcMessageId: '<reply.m-out@example.com>',
  from: { name: 'Ana', address: 'outreach@example.com' },
  to: { name: null, address: 'p@prospect.test' },
  subject: 'Re: Guest post',
  bodyText: 'Thanks!',
  inReplyTo: '<in@prospect.test>',
  references: ['<in@prospect.test>'],
  returnPath: null,
  drafter: 'template-v1',
  draftSha256: 'ab',
};
const triaged = (outcome: 'accept' | 'decline' | 'needs_human' | 'opt_out', dispatchId = 'd1'): ConversationEvent => ({
  type: 'AgentTriaged',
  data: { ...base, dispatchId, inboundMessageId: 'm-in', outcome, classifier: 'offline-v1', reasons: [] },
});
const drafted: ConversationEvent = {
  type: 'ReplyDrafted',
  data: { ...base, ...draft, dispatchId: 'd1', direction: 'outbound', senderType: 'agent', triage: 'accept' },
};
const attempted = (attempt: number): ConversationEvent => ({ type: 'ReplySendAttempted', data: { ...base, messageId: 'm-out', attempt } });
const changed = (oldStatus: string, newStatus: string, resolvedBy: string, resolutionOutcome: string) =>
  ({ type: 'ConversationStatusChanged', data: { ...base, oldStatus, newStatus, resolvedBy, resolutionOutcome } }) as ConversationEvent;
/** `dispatchedAt`: by default after every status change in these histories (all at 1,000). */
const triage = (outcome: 'accept' | 'decline' | 'needs_human' | 'opt_out', d: ReplyDraft | null = null, dispatchId = 'd1', dispatchedAt = 2_000) => ({
  type: 'RecordTriage' as const,
  data: { ...ref, dispatchId, inboundMessageId: 'm-in', dispatchedAt, outcome, classifier: 'offline-v1', reasons: [], draft: d },
});
const sent = { ...ref, messageId: 'm-out', attempt: 1, result: { ok: true as const, mailProviderMessageId: 'Q1' } };

t.test('accept: triage, draft and the first attempt are one decision; the send result resolves', async () => {
  given(conversationDecider, []).when(triage('accept', draft)).then([triaged('accept'), drafted, attempted(1)]);
  given(conversationDecider, [triaged('accept'), drafted, attempted(1)])
    .when({ type: 'RecordSendResult', data: sent })
    .then([
      {
        type: 'ReplySent',
        data: { ...base, messageId: 'm-out', mailProviderMessageId: 'Q1', triage: 'accept', autoResolved: true, sendOutcome: 'sent', senderType: 'agent', attempt: 1 },
      },
      changed('open', 'resolved', 'agent', 'accept'),
    ]);
});

t.test('a dispatch handled twice decides nothing the second time', async () => {
  given(conversationDecider, [triaged('accept'), drafted, attempted(1)]).when(triage('accept', draft)).then([]);
  given(conversationDecider, [{ type: 'AgentSkipped', data: { ...base, dispatchId: 'd1', inboundMessageId: 'm-in', reason: 'agent_inactive' } }])
    .when(triage('accept', draft))
    .then([]);
});

t.test('a send result recorded twice is recorded once', async () => {
  const history: ConversationEvent[] = [triaged('accept'), drafted, attempted(1)];
  const after = given(conversationDecider, history).when({ type: 'RecordSendResult', data: sent }).then([
    {
      type: 'ReplySent',
      data: { ...base, messageId: 'm-out', mailProviderMessageId: 'Q1', triage: 'accept', autoResolved: true, sendOutcome: 'sent', senderType: 'agent', attempt: 1 },
    },
    changed('open', 'resolved', 'agent', 'accept'),
  ]);
  t.equal(after.status, 'resolved');
  t.same(conversationDecider.decide({ type: 'RecordSendResult', data: sent }, after), []);
});

t.test('needs_human, opt_out and a silent decline set the status at once', async () => {
  given(conversationDecider, []).when(triage('needs_human')).then([triaged('needs_human'), changed('open', 'awaiting_human', 'agent', 'needs_human')]);
  given(conversationDecider, []).when(triage('opt_out')).then([triaged('opt_out'), changed('open', 'declined', 'agent', 'opted_out')]);
  given(conversationDecider, []).when(triage('decline')).then([triaged('decline'), changed('open', 'declined', 'agent', 'decline')]);
  given(conversationDecider, []).when(triage('accept')).then([triaged('accept'), changed('open', 'resolved', 'agent', 'accept')]);
});

t.test('a failed send is retried, then handed to a person after the last try', async () => {
  const history: ConversationEvent[] = [triaged('accept'), drafted, attempted(1)];
  const failed = { ...ref, messageId: 'm-out', attempt: 1, result: { ok: false as const, error: 'ECONNREFUSED', permanent: false, retryAt: 5_000 } };
  const state = given(conversationDecider, history)
    .when({ type: 'RecordSendResult', data: failed })
    .then([{ type: 'ReplySendFailed', data: { ...base, messageId: 'm-out', attempt: 1, error: 'ECONNREFUSED', permanent: false, retryAt: 5_000 } }]);
  t.equal(state.pending.get('m-out')?.retryAt, 5_000);
  const history2: ConversationEvent[] = [
    ...history,
    { type: 'ReplySendFailed', data: { ...base, messageId: 'm-out', attempt: 1, error: 'ECONNREFUSED', permanent: false, retryAt: 5_000 } },
  ];
  given(conversationDecider, history2).when({ type: 'StartSendAttempt', data: { ...ref, messageId: 'm-out', attempt: 2 } }).then([attempted(2)]);
  given(conversationDecider, [...history2, attempted(2)])
    .when({ type: 'RecordSendResult', data: { ...failed, attempt: 2, result: { ok: false, error: '550 no such user', permanent: true, retryAt: null } } })
    .then([
      { type: 'ReplySendFailed', data: { ...base, messageId: 'm-out', attempt: 2, error: '550 no such user', permanent: true, retryAt: null } },
      changed('open', 'awaiting_human', 'agent', 'send_failed'),
    ]);
});

t.test('the prospect writing again re-opens a closed conversation; a taken-over one is left to the person', async () => {
  const resolved: ConversationEvent[] = [triaged('needs_human'), changed('open', 'resolved', 'user', 'accept')];
  given(conversationDecider, resolved)
    .when(triage('needs_human', null, 'd2'))
    .then([
      { type: 'ConversationReopened', data: { ...base, oldStatus: 'resolved', reason: 'prospect_replied' } },
      triaged('needs_human', 'd2'),
      changed('open', 'awaiting_human', 'agent', 'needs_human'),
    ]);
  given(conversationDecider, [{ type: 'ConversationTakenOver', data: { ...base, by: 'u1' } }])
    .when(triage('accept', draft, 'd2'))
    .then([{ type: 'AgentSkipped', data: { ...base, dispatchId: 'd2', inboundMessageId: 'm-in', reason: 'taken_over' } }]);
  given(conversationDecider, [changed('open', 'awaiting_human', 'agent', 'needs_human')])
    .when(triage('accept', draft, 'd2'))
    .then([{ type: 'AgentSkipped', data: { ...base, dispatchId: 'd2', inboundMessageId: 'm-in', reason: 'awaiting_human' } }]);
});

t.test('a dispatch from before a person closed the conversation is skipped; a later one re-opens it', async () => {
  const declined: ConversationEvent[] = [changed('open', 'declined', 'user', 'manual')];
  given(conversationDecider, declined)
    .when(triage('accept', draft, 'd1', 1_000))
    .then([{ type: 'AgentSkipped', data: { ...base, dispatchId: 'd1', inboundMessageId: 'm-in', reason: 'closed_by_user' } }]);
  given(conversationDecider, declined)
    .when(triage('needs_human', null, 'd2', 1_001))
    .then([
      { type: 'ConversationReopened', data: { ...base, oldStatus: 'declined', reason: 'prospect_replied' } },
      triaged('needs_human', 'd2'),
      changed('open', 'awaiting_human', 'agent', 'needs_human'),
    ]);
  // Closed by the agent: a message it had not reached yet is the prospect writing again.
  given(conversationDecider, [changed('open', 'resolved', 'agent', 'accept')])
    .when(triage('needs_human', null, 'd2', 500))
    .then([
      { type: 'ConversationReopened', data: { ...base, oldStatus: 'resolved', reason: 'prospect_replied' } },
      triaged('needs_human', 'd2'),
      changed('open', 'awaiting_human', 'agent', 'needs_human'),
    ]);
});

t.test("a person's take-over or status change withdraws the agent's reply waiting for a retry", async () => {
  const waiting: ConversationEvent[] = [
    triaged('accept'),
    drafted,
    attempted(1),
    { type: 'ReplySendFailed', data: { ...base, messageId: 'm-out', attempt: 1, error: '451', permanent: false, retryAt: 5_000 } },
  ];
  const withdrawn = (why: string): ConversationEvent => ({
    type: 'ReplySendFailed',
    data: { ...base, messageId: 'm-out', attempt: 1, error: `withdrawn: ${why}`, permanent: true, retryAt: null },
  });
  const state = given(conversationDecider, waiting)
    .when({ type: 'TakeOver', data: { ...ref, by: 'u1' } })
    .then([withdrawn('a person took the conversation over'), { type: 'ConversationTakenOver', data: { ...base, by: 'u1' } }]);
  t.equal(state.pending.size, 0);
  given(conversationDecider, waiting)
    .when({ type: 'ChangeConversationStatus', data: { ...ref, newStatus: 'declined', resolvedBy: 'user', resolutionOutcome: 'manual' } })
    .then([withdrawn('a person changed the conversation status'), changed('open', 'declined', 'user', 'manual')]);
  // A stream written before this rule: the due retry ends the reply instead of sending it.
  given(conversationDecider, [...waiting, { type: 'ConversationTakenOver', data: { ...base, by: 'u1' } }])
    .when({ type: 'StartSendAttempt', data: { ...ref, messageId: 'm-out', attempt: 2 } })
    .then([withdrawn('a person took the conversation over')]);
});

t.test('a reply drafted without its first attempt (SMTP: claimed when a send slot is free) counts as being sent', async () => {
  const queued = [triaged('accept'), drafted];
  given(conversationDecider, []).when({ ...triage('accept', draft), data: { ...triage('accept', draft).data, claimFirstAttempt: false } }).then(queued);
  given(conversationDecider, queued).when({ type: 'StartSendAttempt', data: { ...ref, messageId: 'm-out', attempt: 1 } }).then([attempted(1)]);
  // Its outcome comes first: a new dispatch waits, a person's status change and reply are refused, as while in flight.
  given(conversationDecider, queued).when(triage('accept', draft, 'd2')).thenThrows(ConversationRuleError, /being sent/);
  given(conversationDecider, queued)
    .when({ type: 'ChangeConversationStatus', data: { ...ref, newStatus: 'declined', resolvedBy: 'user', resolutionOutcome: 'manual' } })
    .thenThrows(ConversationRuleError, /being sent/);
  given(conversationDecider, queued)
    .when({ type: 'StartReply', data: { ...ref, draft: { ...draft, messageId: 'm-2' } } })
    .thenThrows(ConversationRuleError, /being sent/);
  // A take-over withdraws it: it never had an attempt.
  given(conversationDecider, queued)
    .when({ type: 'TakeOver', data: { ...ref, by: 'u1' } })
    .then([
      { type: 'ReplySendFailed', data: { ...base, messageId: 'm-out', attempt: 0, error: 'withdrawn: a person took the conversation over', permanent: true, retryAt: null } },
      { type: 'ConversationTakenOver', data: { ...base, by: 'u1' } },
    ]);
});

t.test('ChangeConversationStatus: allowed and refused transitions', async () => {
  const change = (newStatus: 'open' | 'resolved' | 'declined' | 'awaiting_human', resolvedBy: 'agent' | 'user') => ({
    type: 'ChangeConversationStatus' as const,
    data: { ...ref, newStatus, resolvedBy, resolutionOutcome: 'manual' },
  });
  given(conversationDecider, []).when(change('resolved', 'user')).then([changed('open', 'resolved', 'user', 'manual')]);
  given(conversationDecider, []).when(change('open', 'user')).then([]);
  const awaiting = [changed('open', 'awaiting_human', 'agent', 'needs_human')];
  given(conversationDecider, awaiting).when(change('declined', 'user')).then([changed('awaiting_human', 'declined', 'user', 'manual')]);
  given(conversationDecider, awaiting).when(change('resolved', 'agent')).thenThrows(ConversationRuleError, /cannot move/);
  given(conversationDecider, awaiting)
    .when(change('open', 'user'))
    .then([{ type: 'ConversationReopened', data: { ...base, oldStatus: 'awaiting_human', reason: 'user' } }]);
  given(conversationDecider, [triaged('accept'), drafted, attempted(1)]).when(change('declined', 'user')).thenThrows(ConversationRuleError, /being sent/);
  given(conversationDecider, [{ type: 'ConversationTakenOver', data: { ...base, by: 'u1' } }])
    .when(change('resolved', 'agent'))
    .thenThrows(ConversationRuleError, /taken/);
});

t.test('take over and hand back are idempotent', async () => {
  given(conversationDecider, []).when({ type: 'TakeOver', data: { ...ref, by: 'u1' } }).then([{ type: 'ConversationTakenOver', data: { ...base, by: 'u1' } }]);
  given(conversationDecider, [{ type: 'ConversationTakenOver', data: { ...base, by: 'u1' } }]).when({ type: 'TakeOver', data: { ...ref, by: 'u2' } }).then([]);
  given(conversationDecider, []).when({ type: 'HandBack', data: { ...ref, by: 'u1' } }).then([]);
});

t.test('a long conversation: a dispatch decided late folds as fast as one decided early', async (t) => {
  const events: ConversationEvent[] = Array.from({ length: 16_000 }, (_, i) => ({
    type: 'AgentSkipped',
    data: { ...base, dispatchId: `d${i}`, inboundMessageId: `m${i}`, reason: 'agent_inactive' },
  }));
  const state = events.reduce(conversationDecider.evolve, conversationDecider.initialState());
  t.equal(state.dispatches.size, 16_000);
  t.ok(state.dispatches.has('d0') && state.dispatches.has('d15999'));
  // Copying the set of decided dispatches per event made the fold quadratic in the conversation's length.
  const early = foldCost(conversationDecider, events, 1_000, 1_000);
  const late = foldCost(conversationDecider, events, 15_000, 1_000);
  t.ok(late < early * 6, `1,000 dispatches after 15,000 fold in ${late.toFixed(2)} ms, after 1,000 in ${early.toFixed(2)} ms (quadratic: about 15×)`);
});
