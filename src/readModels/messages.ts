import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `messages` read model, written by the inbox projection. */
export const MESSAGES = 'messages';

/**
 * The `conversationMessages` read model: one link per (conversation, message), since a message may
 * belong to several conversations (`conversationIds`) and an array is no index key on every adapter.
 */
export const CONVERSATION_MESSAGES = 'conversationMessages';

export interface MessageDoc {
  [key: string]: unknown;
  id: string;
  siteId: string;
  teamId: string;
  conversationIds: string[];
  direction: 'inbound' | 'outbound';
  /** `recipient` (the prospect), `agent` (the Outreach Agent's reply) or `user` (a person's reply). */
  senderType: 'recipient' | 'agent' | 'user';
  from: string;
  fromName: string | null;
  subject: string;
  bodyText: string;
  bodyHtml: string | null;
  externalMessageId: string | null;
  inReplyTo: string | null;
  references: string | null;
  /** Inbound only: read from a team member's forward, whose ids no reply threads on. */
  forwarded?: boolean;
  channel: string;
  /** Inbound: when it arrived; outbound: when it was drafted. */
  receivedAt: string;
  /** Outbound only: recipient, delivery state and the mail provider's id once sent. */
  to?: string;
  deliveryStatus?: 'sending' | 'retrying' | 'sent' | 'failed';
  mailProviderMessageId?: string | null;
  sentAt?: string | null;
  lastError?: string | null;
}

export interface ConversationMessageDoc {
  [key: string]: unknown;
  /** `<conversationId>:<messageId>` */
  id: string;
  conversationId: string;
  messageId: string;
  siteId: string;
  /** The message's `receivedAt`: the conversation's order. */
  receivedAt: string;
}

export const conversationMessageId = (conversationId: string, messageId: string) => `${conversationId}:${messageId}`;

/** A conversation's messages, oldest first, walk this index. */
export const CONVERSATION_MESSAGE_INDEXES = [['conversationId', 'receivedAt']] as const;

export const getMessage = (store: ReadModelStore, messageId: string) => store.get<MessageDoc>(MESSAGES, messageId);

const LINKS_PER_PAGE = 500;

/** A conversation's messages, inbound and outbound, oldest first (receivedAt, then the link's id): an index walk, then one read per message. */
export async function listMessagesOfConversation(store: ReadModelStore, siteId: string, conversationId: string): Promise<MessageDoc[]> {
  const links: ConversationMessageDoc[] = [];
  let after: { value: string; id: string } | null = null;
  for (;;) {
    const page: ConversationMessageDoc[] = await store.page<ConversationMessageDoc>(CONVERSATION_MESSAGES, {
      filter: { conversationId },
      orderBy: 'receivedAt',
      direction: 'asc',
      after,
      limit: LINKS_PER_PAGE,
    });
    links.push(...page);
    if (page.length < LINKS_PER_PAGE) break;
    const last = page.at(-1)!;
    after = { value: last.receivedAt, id: last.id };
  }
  const messages = await Promise.all(links.filter((l) => l.siteId === siteId).map((l) => getMessage(store, l.messageId)));
  return messages.filter((m): m is MessageDoc => m !== null);
}
