import type { Ask } from '../domain/ingestion.ts';
import type { TriageDecision } from '../domain/outreachAgent.ts';

export { TRIAGE_OUTCOMES, type TriageOutcome } from '../domain/conversation.ts';
/** The agent's triage: its outcomes and decisions are the domain's (src/domain/outreachAgent.ts). */
export type { TriageDecision };

export interface TriageInput {
  subject: string;
  bodyText: string;
  from: string;
  fromName: string | null;
  /** The receiving site's domain. */
  siteDomain: string;
  /** A prospect's reply on an existing thread (ingestion's threading matched it), not a first pitch. */
  isReply: boolean;
  /** The conversation's opportunity as the extractor found it, or null when there was none. */
  ask: Ask | null;
}

export interface Triage {
  readonly name: string;
  triage(input: TriageInput): Promise<TriageDecision>;
}
