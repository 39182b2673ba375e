import type { Ask } from '../domain/ingestion.ts';

import type { ReplyTone } from '../domain/agents.ts';
export { REPLY_TONES, type ReplyTone } from '../domain/agents.ts';

/** The site's settings a reply is written with (settable per site). */
export interface ReplySettings {
  /** Who signs the reply; null signs as the site's team. */
  senderName: string | null;
  /** Appended under the standard `-- ` delimiter; null for none. */
  signature: string | null;
  tone: ReplyTone;
}

export interface DraftInput {
  /** Only these two outcomes get a reply. */
  outcome: 'accept' | 'decline';
  /** The inbound message being answered. */
  subject: string;
  bodyText: string;
  from: string;
  fromName: string | null;
  /**
   * The asks the reply answers, in the pitch's order: the conversation's opportunity, or, for a pitch
   * with several asks, every one of them (one reply per message); empty when none was extracted.
   */
  asks: Ask[];
  siteDomain: string;
  settings: ReplySettings;
}

export interface Draft {
  subject: string;
  /** Plain-text body, signature included. */
  text: string;
  /** Which drafter wrote it, recorded for auditors: `template-v1`, `openai:<model>`, or a fallback. */
  drafter: string;
}

export interface Drafter {
  readonly name: string;
  draft(input: DraftInput): Promise<Draft>;
}
