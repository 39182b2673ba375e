import type { ProjectionWriter } from '../../ports/readModelStore.ts';
import { OPPORTUNITIES, type OpportunityDoc } from '../../readModels/opportunities.ts';
import { type InboxEvent, iso } from './inboxEvent.ts';

/**
 * Opportunities: one per opened conversation, with the extracted ask (a stub when there was none);
 * for a pitch the agent sent, the article it offers (target) and the prospect's site (source).
 */
export async function applyToOpportunities(event: InboxEvent, w: ProjectionWriter): Promise<void> {
  if (event.type === 'OutboundConversationStarted') {
    const d = event.data;
    const opportunity: OpportunityDoc = {
      id: d.opportunityId,
      siteId: d.siteId,
      teamId: d.teamId,
      conversationId: d.conversationId,
      entrySource: 'outbound_pitch',
      targetUrl: d.offeredUrl ?? '',
      anchorText: null,
      suggestedSentence: null,
      sourceUrl: d.prospectUrl,
      stub: false,
      createdAt: iso(d.occurredAt),
    };
    await w.put(OPPORTUNITIES, opportunity);
    return;
  }
  if (event.type !== 'ConversationOpened') return;
  const d = event.data;
  const ask = d.ask ?? { targetUrl: '', anchorText: null, suggestedSentence: null, sourceUrl: null };
  const opportunity: OpportunityDoc = {
    id: d.opportunityId,
    siteId: d.siteId,
    teamId: d.teamId,
    conversationId: d.conversationId,
    entrySource: d.entrySource,
    ...ask,
    stub: d.ask === null,
    createdAt: iso(d.occurredAt),
  };
  await w.put(OPPORTUNITIES, opportunity);
}
