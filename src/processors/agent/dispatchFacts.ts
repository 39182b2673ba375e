import { type AgentSettings, agentsDecider, agentsStream, settingsOf } from '../../domain/agents.ts';
import type { Ask, IngestionEvent } from '../../domain/ingestion.ts';
import { type SuppressionState, suppressionDecider, suppressionStream } from '../../domain/suppression.ts';
import type { EventStore, RecordedEvent } from '../../ports/eventStore.ts';
import type { ReadModelStore } from '../../ports/readModelStore.ts';
import { type SiteDoc, getSite } from '../../readModels/sites.ts';
import { getOpportunity } from '../../readModels/opportunities.ts';
import { aggregateStream } from '../../commands/aggregateStream.ts';

export type DispatchRequested = Extract<IngestionEvent, { type: 'AgentDispatchRequested' }>['data'];
export type IngestedMessage = Extract<IngestionEvent, { type: 'MessageIngested' }>['data'];

/** Everything the agent needs to decide on one dispatch, loaded when it takes the dispatch. */
export interface DispatchFacts {
  dispatch: DispatchRequested;
  message: IngestedMessage;
  ask: Ask | null;
  site: SiteDoc | null;
  settings: AgentSettings;
  suppression: SuppressionState;
}

/**
 * The message and the ask come from the ingestion's own append (the dispatch's neighbours in its
 * stream), so the agent never waits for the inbox projections; site, agent settings and the
 * suppression list are read as they are now, so a precondition that stopped holding is seen.
 */
export async function loadDispatchFacts(
  deps: { events: EventStore; readModels: ReadModelStore },
  recorded: RecordedEvent,
): Promise<DispatchFacts | null> {
  const dispatch = recorded.data as DispatchRequested;
  const ingestionId = recorded.metadata['ingestionId'];
  const neighbours = (await deps.events.readStream(recorded.streamId)).filter((e) => e.metadata['ingestionId'] === ingestionId);
  const message = neighbours.find((e) => e.type === 'MessageIngested')?.data as IngestedMessage | undefined;
  if (!message) return null;
  const opened = neighbours.find(
    (e) => e.type === 'ConversationOpened' && (e.data as { conversationId: string }).conversationId === dispatch.conversationId,
  )?.data as Extract<IngestionEvent, { type: 'ConversationOpened' }>['data'] | undefined;
  let ask: Ask | null = opened?.ask ?? null;
  if (!opened) {
    // A reply on an existing thread: the opportunity was created by an earlier ingestion.
    const opportunity = await getOpportunity(deps.readModels, message.opportunityIds[0] ?? '');
    if (opportunity && !opportunity.stub) {
      ask = { targetUrl: opportunity.targetUrl, anchorText: opportunity.anchorText, suggestedSentence: opportunity.suggestedSentence, sourceUrl: opportunity.sourceUrl };
    }
  }
  const [site, agents, suppression] = await Promise.all([
    getSite(deps.readModels, dispatch.siteId),
    aggregateStream(deps.events, agentsStream(dispatch.siteId), agentsDecider),
    aggregateStream(deps.events, suppressionStream(dispatch.teamId), suppressionDecider),
  ]);
  return { dispatch, message, ask, site, settings: settingsOf(agents.state, 'outreach'), suppression: suppression.state };
}
