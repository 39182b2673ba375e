import type { ThreadTarget } from '../domain/ingestion.ts';

/**
 * The threading index: which conversation an earlier message of a site (by its Message-Id)
 * belongs to. No stream holds it (it spans every ingestion of the site), so ingestion reads it
 * from the `messageThreads` read model through this port.
 */
export interface ThreadIndex {
  /** The conversation of the first of `messageIds` that is known, in the order given. */
  find(siteId: string, messageIds: readonly string[]): Promise<ThreadTarget | null>;
}
