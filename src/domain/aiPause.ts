import type { AgentGateClosed } from './agents.ts';
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
  /** A message on the thread of a conversation a person has taken over. */
  'taken_over',
  /** A message on the thread of a conversation waiting for a person. */
  'awaiting_human',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface AiPauseFacts {
  senderEmail: string;
  /** The sender is on the team's suppression list. */
  suppressed: boolean;
  /** `agentGate` for the Outreach Agent's reply: why it may not act on the site now (licence, plan, active, auto-reply), or null. */
  agentGate: AgentGateClosed | null;
  sendingDomainVerified: boolean;
  /** The conversation a threaded message joins, as its stream has it; null for a new conversation. */
  conversation: { handledBy: 'agent' | 'human'; status: string } | null;
}

export type AiPause = { aiPaused: false } | { aiPaused: true; skipReason: SkipReason };

export function decideAiPause(facts: AiPauseFacts): AiPause {
  if (isNoReplyAddress(facts.senderEmail)) return { aiPaused: true, skipReason: 'no_reply_sender' };
  if (facts.suppressed) return { aiPaused: true, skipReason: 'contact_suppressed' };
  if (facts.agentGate === 'auto_reply_disabled') return { aiPaused: true, skipReason: 'auto_reply_disabled' };
  // An unlicensed site or a plan without the agent: the agent is not active there.
  if (facts.agentGate) return { aiPaused: true, skipReason: 'agent_inactive' };
  if (!facts.sendingDomainVerified) return { aiPaused: true, skipReason: 'sending_domain_unverified' };
  if (facts.conversation?.handledBy === 'human') return { aiPaused: true, skipReason: 'taken_over' };
  if (facts.conversation?.status === 'awaiting_human') return { aiPaused: true, skipReason: 'awaiting_human' };
  return { aiPaused: false };
}
