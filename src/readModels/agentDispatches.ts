/** The `agentDispatches` read model (dispatches waiting for the agent worker), written by the inbox projection. */
export const AGENT_DISPATCHES = 'agentDispatches';

export interface AgentDispatchDoc {
  [key: string]: unknown;
  id: string;
  siteId: string;
  conversationId: string;
  messageId: string;
  status: 'requested' | 'triaged' | 'skipped';
  requestedAt: string;
  outcome?: string;
  skipReason?: string;
  handledAt?: string;
}
