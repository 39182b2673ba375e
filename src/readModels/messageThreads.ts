import { type ThreadTarget, normaliseMessageId } from '../domain/ingestion.ts';
import type { EntrySource } from '../domain/outreachEvents.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';
import type { ThreadIndex } from '../ports/threadIndex.ts';

/** The `messageThreads` read model (the threading index), written by the inbox projection. */
export const MESSAGE_THREADS = 'messageThreads';

/** `<siteId>|<Message-Id>` → the conversation the message belongs to. */
export interface MessageThreadDoc {
  [key: string]: unknown;
  id: string;
  siteId: string;
  conversationId: string;
  opportunityId: string;
  entrySource: EntrySource;
}

export const messageThreadId = (siteId: string, externalMessageId: string) => `${siteId}|${normaliseMessageId(externalMessageId)}`;

/** The site's conversation of the first of `messageIds` that is known (callers list them in threading order). */
export async function findThread(store: ReadModelStore, siteId: string, messageIds: readonly string[]): Promise<ThreadTarget | null> {
  for (const messageId of messageIds) {
    const doc = await store.get<MessageThreadDoc>(MESSAGE_THREADS, messageThreadId(siteId, messageId));
    if (doc) return { conversationId: doc.conversationId, opportunityId: doc.opportunityId, entrySource: doc.entrySource };
  }
  return null;
}

/** The ThreadIndex port over this read model. */
export const threadIndexOver = (store: ReadModelStore): ThreadIndex => ({ find: (siteId, messageIds) => findThread(store, siteId, messageIds) });
