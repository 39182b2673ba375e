import t from 'tap';
import { type ConversationEvent, type ReplyDraft, ConversationRuleError, conversationDecider } from '../../src/domain/conversation.ts';
import { given } from '../helpers/givenWhenThen.ts';

const ref = { conversationId: 'c1', siteId: 's1', teamId: 't1', now: 1_000 };
const base = { conversationId: 'c1', siteId: 's1', teamId: 't1', occurredAt: 1_000 };
const draft: ReplyDraft = {
  messageId: 'm-user',
  rfcMessageId: '<reply.m-user@example.com>',
  from: { name: 'Ana', address: 'outreach@example.com' },
  to: { name: null, address: 'p@prospect.test' },
  subject: 'Re: Guest post',
  bodyText: 'Sure, send it over.',
  inReplyTo: '<in@prospect.test>',
  references: ['<in@prospect.test>'],
  returnPath: null,
  drafter: 'user',
  draftSha256: 'ab',
};
const markedRead = (upToMessageId: string | null): ConversationEvent => ({ type: 'ConversationMarkedRead', data: { ...base, upToMessageId, by: 'k1' } });
const markedUnread: ConversationEvent = { type: 'ConversationMarkedUnread', data: { ...base, by: 'k1' } };
const userDrafted: ConversationEvent = {
  type: 'ReplyDrafted',
  data: { ...base, ...draft, dispatchId: null, direction: 'outbound', senderType: 'user', triage: 'manual' },
};
const attempted: ConversationEvent = { type: 'ReplySendAttempted', data: { ...base, messageId: 'm-user', attempt: 1 } };
const failedForGood: ConversationEvent = {
  type: 'ReplySendFailed',
  data: { ...base, messageId: 'm-user', attempt: 1, error: '550 no such user', permanent: true, retryAt: null },
};

t.test('mark read: one fact per inbound message read up to; twice records nothing', async () => {
  given(conversationDecider, []).when({ type: 'MarkRead', data: { ...ref, lastInboundMessageId: 'm1', by: 'k1' } }).then([markedRead('m1')]);
  given(conversationDecider, [markedRead('m1')]).when({ type: 'MarkRead', data: { ...ref, lastInboundMessageId: 'm1', by: 'k1' } }).then([]);
  given(conversationDecider, [markedRead('m1')]).when({ type: 'MarkRead', data: { ...ref, lastInboundMessageId: 'm2', by: 'k1' } }).then([markedRead('m2')]);
  given(conversationDecider, [markedRead('m1'), markedUnread]).when({ type: 'MarkRead', data: { ...ref, lastInboundMessageId: 'm1', by: 'k1' } }).then([markedRead('m1')]);
});

t.test('mark unread: only after a read mark; twice records nothing', async () => {
  given(conversationDecider, []).when({ type: 'MarkUnread', data: { ...ref, by: 'k1' } }).then([]);
  given(conversationDecider, [markedRead('m1')]).when({ type: 'MarkUnread', data: { ...ref, by: 'k1' } }).then([markedUnread]);
  given(conversationDecider, [markedRead('m1'), markedUnread]).when({ type: 'MarkUnread', data: { ...ref, by: 'k1' } }).then([]);
});

t.test("a conversation the agent opened with its pitch starts read: mark unread records, mark read does not", async () => {
  const started: ConversationEvent = {
    type: 'OutboundConversationStarted',
    data: { ...base, opportunityId: 'o1', contactEmail: 'p@prospect.test', contactName: null, subject: 'A link', prospectUrl: 'https://prospect.test/a', offeredUrl: null, runId: 'r1' },
  };
  given(conversationDecider, [started]).when({ type: 'MarkUnread', data: { ...ref, by: 'k1' } }).then([markedUnread]);
  given(conversationDecider, [started]).when({ type: 'MarkRead', data: { ...ref, lastInboundMessageId: null, by: 'k1' } }).then([]);
  given(conversationDecider, [started, markedUnread]).when({ type: 'MarkRead', data: { ...ref, lastInboundMessageId: null, by: 'k1' } }).then([markedRead(null)]);
});

t.test("a person's reply: drafted with the first attempt claimed; the same reply again records nothing, even after it failed for good", async () => {
  given(conversationDecider, []).when({ type: 'StartReply', data: { ...ref, draft } }).then([userDrafted, attempted]);
  given(conversationDecider, [userDrafted, attempted]).when({ type: 'StartReply', data: { ...ref, draft } }).then([]);
  given(conversationDecider, [userDrafted, attempted, failedForGood]).when({ type: 'StartReply', data: { ...ref, draft } }).then([]);
  given(conversationDecider, [userDrafted, attempted])
    .when({ type: 'StartReply', data: { ...ref, draft: { ...draft, messageId: 'm-other' } } })
    .thenThrows(ConversationRuleError, /being sent/);
});

t.test('a person changes the status: any transition, the same status twice records nothing, never while a reply is in flight', async () => {
  const change = (newStatus: 'open' | 'resolved' | 'declined' | 'awaiting_human') => ({
    type: 'ChangeConversationStatus' as const,
    data: { ...ref, newStatus, resolvedBy: 'user' as const, resolutionOutcome: 'manual' },
  });
  const resolved: ConversationEvent = {
    type: 'ConversationStatusChanged',
    data: { ...base, oldStatus: 'open', newStatus: 'resolved', resolvedBy: 'user', resolutionOutcome: 'manual' },
  };
  given(conversationDecider, []).when(change('resolved')).then([resolved]);
  given(conversationDecider, [resolved]).when(change('resolved')).then([]);
  given(conversationDecider, [resolved]).when(change('open')).then([{ type: 'ConversationReopened', data: { ...base, oldStatus: 'resolved', reason: 'user' } }]);
  given(conversationDecider, [userDrafted, attempted]).when(change('declined')).thenThrows(ConversationRuleError, /being sent/);
});
