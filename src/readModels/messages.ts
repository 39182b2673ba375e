import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `messages` read model, written by the inbox projection. */
export const MESSAGES = 'messages';

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

export const getMessage = (store: ReadModelStore, messageId: string) => store.get<MessageDoc>(MESSAGES, messageId);

/**
 * A conversation's messages, inbound and outbound, oldest first. A message may belong to several
 * conversations (`conversationIds`), which no equality filter reaches: the site's messages are read
 * and narrowed here.
 */
export async function listMessagesOfConversation(store: ReadModelStore, siteId: string, conversationId: string): Promise<MessageDoc[]> {
  const docs = await store.find<MessageDoc>(MESSAGES, { siteId });
  return docs
    .filter((m) => m.conversationIds.includes(conversationId))
    .sort((a, b) => (a.receivedAt < b.receivedAt ? -1 : a.receivedAt > b.receivedAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
