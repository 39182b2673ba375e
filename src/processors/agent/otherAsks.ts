import { conversationStream } from '../../domain/conversation.ts';
import { conversationEventSchemas } from '../../domain/eventSchemas.ts';
import { otherAskActedOn } from '../../domain/outreachAgent.ts';
import { parseEvent } from '../../lib/parseEvent.ts';
import type { EventStore } from '../../ports/eventStore.ts';

/**
 * Why one reply may not speak for a pitch's other conversations (`otherAskActedOn` on each one's
 * history), or null when it may. Checked when the combined reply is decided and again at each of its
 * attempts: the histories, not the states, so a take-over handed back or a close reopened since
 * still withdraws it.
 */
export async function otherAskTaken(events: EventStore, conversationIds: readonly string[]): Promise<string | null> {
  for (const id of conversationIds) {
    const acted = otherAskActedOn(id, await conversationHistory(events, id));
    if (acted) return acted;
  }
  return null;
}

/** A conversation's events, checked against their schemas, in stream order. */
export async function conversationHistory(events: EventStore, conversationId: string) {
  return (await events.readStream(conversationStream(conversationId))).flatMap((e) => parseEvent(e, conversationEventSchemas) ?? []);
}
