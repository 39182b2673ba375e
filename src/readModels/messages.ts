import type { ReadModelStore } from '../ports/readModelStore.ts';

/** The `messages` read model, written by the inbox projection. */
export const MESSAGES = 'messages';

export interface MessageDoc {
  [key: string]: unknown;
  id: string;
  siteId: string;
  teamId: string;
  conversationIds: string[];
  direction: 'inbound';
  senderType: 'recipient';
  from: string;
  fromName: string | null;
  subject: string;
  bodyText: string;
  bodyHtml: string | null;
  externalMessageId: string | null;
  inReplyTo: string | null;
  references: string | null;
  channel: string;
  receivedAt: string;
}

export const getMessage = (store: ReadModelStore, messageId: string) => store.get<MessageDoc>(MESSAGES, messageId);
