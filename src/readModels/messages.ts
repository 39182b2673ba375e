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
