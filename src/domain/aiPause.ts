import { isNoReplyAddress } from './noReply.ts';

/**
 * Why the agent will not act on a conversation. One value per cause, checked in this order;
 * the first that applies is the `skipReason` of the ingestion result.
 */
export const SKIP_REASONS = [
  'no_reply_sender',
  'contact_suppressed',
  'agent_inactive',
  'auto_reply_disabled',
  'sending_domain_unverified',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface AiPauseFacts {
  senderEmail: string;
  /** The sender is on the team's suppression list. */
  suppressed: boolean;
  /** The Outreach Agent is active for the site (and the site's plan includes it). */
  agentActive: boolean;
  autoReply: boolean;
  sendingDomainVerified: boolean;
}

export type AiPause = { aiPaused: false } | { aiPaused: true; skipReason: SkipReason };

export function decideAiPause(facts: AiPauseFacts): AiPause {
  if (isNoReplyAddress(facts.senderEmail)) return { aiPaused: true, skipReason: 'no_reply_sender' };
  if (facts.suppressed) return { aiPaused: true, skipReason: 'contact_suppressed' };
  if (!facts.agentActive) return { aiPaused: true, skipReason: 'agent_inactive' };
  if (!facts.autoReply) return { aiPaused: true, skipReason: 'auto_reply_disabled' };
  if (!facts.sendingDomainVerified) return { aiPaused: true, skipReason: 'sending_domain_unverified' };
  return { aiPaused: false };
}
