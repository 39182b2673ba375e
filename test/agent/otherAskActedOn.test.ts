import t from 'tap';
import type { ConversationEvent } from '../../src/domain/conversation.ts';
import { otherAskActedOn } from '../../src/domain/outreachAgent.ts';

const base = { conversationId: 'c2', siteId: 's', teamId: 'tm', occurredAt: 1 } as const;
const ev = (type: string, data: Record<string, unknown> = {}) => ({ type, data: { ...base, ...data } }) as unknown as ConversationEvent;

t.test('only read marks leave another ask to the combined reply', async (t) => {
  t.equal(otherAskActedOn('c2', []), null, 'untouched');
  t.equal(otherAskActedOn('c2', [ev('ConversationMarkedRead', { upToMessageId: null, by: 'ana' }), ev('ConversationMarkedUnread', { by: 'ana' })]), null, 'read and unread');
});

t.test('any act of a person, even one undone, gives the ask back to its own conversation', async (t) => {
  t.match(otherAskActedOn('c2', [ev('ConversationTakenOver', { by: 'ana' }), ev('ConversationHandedBack', { by: 'ana' })]), /^a person took over conversation c2/, 'taken over and handed back');
  t.match(otherAskActedOn('c2', [ev('ConversationStatusChanged', { newStatus: 'declined' }), ev('ConversationReopened')]), /^a person set to declined conversation c2/, 'closed and reopened');
  t.match(otherAskActedOn('c2', [ev('ConversationMarkedRead'), ev('ReplyDrafted')]), /^a reply of its own was written on conversation c2/, 'a reply of its own after a read mark');
  t.match(otherAskActedOn('c2', [ev('AgentSkipped')]), /^AgentSkipped was recorded on conversation c2/, 'a decision of its own');
});
