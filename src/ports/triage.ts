import type { Ask } from '../domain/ingestion.ts';

/**
 * What the agent does with a dispatched conversation: `accept` (reply and resolve), `decline`
 * (polite reply or none, resolve as declined), `needs_human` (no reply, `awaiting_human`),
 * `opt_out` (suppress the sender, no reply).
 */
export type TriageOutcome = 'accept' | 'decline' | 'needs_human' | 'opt_out';
export const TRIAGE_OUTCOMES = ['accept', 'decline', 'needs_human', 'opt_out'] as const satisfies readonly TriageOutcome[];

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

export interface TriageDecision {
  outcome: TriageOutcome;
  /** Which classifier decided, recorded for auditors: `offline-v1`, `openai:<model>`, or a fallback. */
  classifier: string;
  /** Short machine-readable reasons, such as `paid_link_demand` or `opt_out_phrase`. */
  reasons: string[];
}

export interface Triage {
  readonly name: string;
  triage(input: TriageInput): Promise<TriageDecision>;
}
