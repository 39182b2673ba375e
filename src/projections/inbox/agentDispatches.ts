import type { ProjectionWriter } from '../../ports/readModelStore.ts';
import { AGENT_DISPATCHES, type AgentDispatchDoc } from '../../readModels/agentDispatches.ts';
import { type InboxEvent, iso } from './inboxEvent.ts';

/** The agent's work queue: a dispatch per inbound message, then what the agent decided on it. */
export async function applyToAgentDispatches(event: InboxEvent, w: ProjectionWriter): Promise<void> {
  switch (event.type) {
    case 'AgentDispatchRequested': {
      const d = event.data;
      const doc: AgentDispatchDoc = {
        id: d.dispatchId,
        siteId: d.siteId,
        conversationId: d.conversationId,
        messageId: d.messageId,
        status: 'requested',
        requestedAt: iso(d.occurredAt),
      };
      return w.put(AGENT_DISPATCHES, doc);
    }
    case 'AgentTriaged':
    case 'AgentSkipped': {
      const dispatch = await w.get<AgentDispatchDoc>(AGENT_DISPATCHES, event.data.dispatchId);
      if (!dispatch) return;
      return w.put(AGENT_DISPATCHES, {
        ...dispatch,
        status: event.type === 'AgentTriaged' ? 'triaged' : 'skipped',
        ...(event.type === 'AgentTriaged' ? { outcome: event.data.outcome } : { skipReason: event.data.reason }),
        handledAt: iso(event.data.occurredAt),
      });
    }
    default:
      return;
  }
}
