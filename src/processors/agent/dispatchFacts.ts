import { type AgentSettings, agentsDecider, agentsStream, settingsOf } from '../../domain/agents.ts';
import { ingestionEventSchemas } from '../../domain/eventSchemas.ts';
import type { Ask, IngestionEvent } from '../../domain/ingestion.ts';
import { type SuppressionState, suppressionDecider, suppressionStream } from '../../domain/suppression.ts';
import type { EventStore, RecordedEvent } from '../../ports/eventStore.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import { type SiteDoc, getSite } from '../../readModels/sites.ts';
import { getOpportunity } from '../../readModels/opportunities.ts';
import { getConversation } from '../../readModels/conversations.ts';
import { aggregateStream } from '../../commands/aggregateStream.ts';
import { parseEvent } from '../../lib/parseEvent.ts';

export type DispatchRequested = Extract<IngestionEvent, { type: 'AgentDispatchRequested' }>['data'];
export type IngestedMessage = Extract<IngestionEvent, { type: 'MessageIngested' }>['data'];

/** Everything the agent needs to decide on one dispatch, loaded when it takes the dispatch. */
export interface DispatchFacts {
  dispatch: DispatchRequested;
  message: IngestedMessage;
  ask: Ask | null;
  /**
   * A pitch with several asks opened a conversation per ask, and one reply may answer them all: for
   * the message's first conversation, the others it opened with their asks, in order (else empty).
   */
  otherAsks: Array<{ conversationId: string; ask: Ask | null }>;
  /** The message's first conversation, which answers for the whole message, when it is not this one. */
  answeredBy: string | null;
  site: SiteDoc | null;
  settings: AgentSettings;
  suppression: SuppressionState;
  /**
   * On a thread (the message joined a conversation an earlier ingestion opened), the conversation's
   * contact, undefined while the read models do not hold the conversation; null for a conversation
   * this message opened.
   */
  contactEmail: string | null | undefined;
}

/** An `AgentDispatchRequested` as the log holds it (its stream and ingestion) with its data parsed. */
export interface RecordedDispatch {
  recorded: RecordedEvent;
  dispatch: DispatchRequested;
}

/** The dispatch in a recorded event; null for any other type. */
export function recordedDispatch(recorded: RecordedEvent): RecordedDispatch | null {
  const event = parseEvent(recorded, ingestionEventSchemas);
  return event?.type === 'AgentDispatchRequested' ? { recorded, dispatch: event.data } : null;
}

/**
 * The message and the ask come from the ingestion's own append (the dispatch's neighbours in its
 * stream), so the agent never waits for the inbox projections; site, agent settings and the
 * suppression list are read as they are now, so a precondition that stopped holding is seen.
 */
export async function loadDispatchFacts(
  deps: { events: EventStore; readModels: ReadModelStore },
  { recorded, dispatch }: RecordedDispatch,
): Promise<DispatchFacts | null> {
  const ingestionId = recorded.metadata['ingestionId'];
  const neighbours = (await deps.events.readStream(recorded.streamId))
    .filter((e) => e.metadata['ingestionId'] === ingestionId)
    .map((e) => parseEvent(e, ingestionEventSchemas));
  let message: IngestedMessage | undefined;
  let opened: Extract<IngestionEvent, { type: 'ConversationOpened' }>['data'] | undefined;
  const others: DispatchFacts['otherAsks'] = [];
  for (const e of neighbours) {
    if (e?.type === 'MessageIngested') message ??= e.data;
    else if (e?.type === 'ConversationOpened') {
      if (e.data.conversationId === dispatch.conversationId) opened ??= e.data;
      else others.push({ conversationId: e.data.conversationId, ask: e.data.ask });
    }
  }
  if (!message) return null;
  const first = message.conversationIds[0];
  const answeredBy = opened && first !== undefined && first !== dispatch.conversationId ? first : null;
  let ask: Ask | null = opened?.ask ?? null;
  let contactEmail: string | null | undefined = null;
  if (!opened) {
    contactEmail = (await getConversation(deps.readModels, dispatch.conversationId))?.contactEmail;
    // A reply on an existing thread: the opportunity was created by an earlier ingestion. On the
    // agent's own cold pitch it is the link the site asked for (its article, on the prospect's page):
    // the prospect asks for nothing, and the model was told the site's article was the prospect's ask.
    const opportunity = await getOpportunity(deps.readModels, message.opportunityIds[0] ?? '');
    if (opportunity && !opportunity.stub && opportunity.entrySource !== 'outbound_pitch') {
      ask = { targetUrl: opportunity.targetUrl, anchorText: opportunity.anchorText, suggestedSentence: opportunity.suggestedSentence, sourceUrl: opportunity.sourceUrl };
    }
  }
  const [site, agents, suppression] = await Promise.all([
    getSite(deps.readModels, dispatch.siteId),
    aggregateStream(deps.events, agentsStream(dispatch.siteId), agentsDecider),
    aggregateStream(deps.events, suppressionStream(dispatch.teamId), suppressionDecider),
  ]);
  return { dispatch, message, ask, otherAsks: opened && answeredBy === null ? others : [], answeredBy, site, settings: settingsOf(agents.state, 'outreach'), suppression: suppression.state, contactEmail };
}
