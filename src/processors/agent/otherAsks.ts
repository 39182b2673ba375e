import { conversationDecider, conversationStream } from '../../domain/conversation.ts';
import { aggregateStream } from '../../commands/aggregateStream.ts';
import type { EventStore } from '../../ports/eventStore.ts';

/**
 * Why one reply may not speak for a pitch's other conversations: one of them is no longer open and
 * the agent's, or (`noReplyOfTheirOwn`, when the reply is decided) has a reply of its own under way.
 * Null when it may. Checked when the combined reply is decided and again at each of its attempts.
 */
export async function otherAskTaken(events: EventStore, conversationIds: readonly string[], options: { noReplyOfTheirOwn: boolean }): Promise<string | null> {
  for (const id of conversationIds) {
    const { state } = await aggregateStream(events, conversationStream(id), conversationDecider);
    if (state.handledBy === 'human') return `a person took over conversation ${id}, one of the pitch's other asks`;
    if (state.status !== 'open') return `conversation ${id}, one of the pitch's other asks, is ${state.status}`;
    if (options.noReplyOfTheirOwn && state.pending.size > 0) return `conversation ${id}, one of the pitch's other asks, has a reply of its own under way`;
  }
  return null;
}
