import type { AgentRunEvent } from '../../domain/agentRun.ts';
import type { OpportunityProposal } from '../../domain/agentWork.ts';
import { assertNever } from '../../domain/decider.ts';
import type { Ask } from '../../domain/ingestion.ts';
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
      kind: 'outreach',
      conversationId: d.conversationId,
      entrySource: 'outbound_pitch',
      targetUrl: d.offeredUrl ?? '',
      anchorText: null,
      suggestedSentence: null,
      sourceUrl: d.prospectUrl,
      stub: false,
      details: null,
      runId: null,
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
    kind: 'inbound_pitch',
    conversationId: d.conversationId,
    entrySource: d.entrySource,
    ...ask,
    stub: d.ask === null,
    details: null,
    runId: null,
    createdAt: iso(d.occurredAt),
  };
  await w.put(OPPORTUNITIES, opportunity);
}

/** The ask-shaped fields of an agent's proposal: what to link or fix, where (the full proposal is `details`). */
export function askOfProposal(p: OpportunityProposal): Ask {
  switch (p.kind) {
    case 'interlinking':
      return { targetUrl: p.targetUrl, anchorText: p.anchor, suggestedSentence: p.sentence, sourceUrl: p.sourceUrl };
    case 'article_boost':
      return { targetUrl: p.url, anchorText: null, suggestedSentence: null, sourceUrl: null };
    case 'article_creation':
      return { targetUrl: '', anchorText: null, suggestedSentence: null, sourceUrl: null };
    case 'ai_prompt':
      return { targetUrl: p.url ?? '', anchorText: null, suggestedSentence: null, sourceUrl: null };
    case 'site_performance':
      return { targetUrl: p.url, anchorText: null, suggestedSentence: null, sourceUrl: null };
    case 'outreach':
      return { targetUrl: p.offeredUrl ?? '', anchorText: null, suggestedSentence: null, sourceUrl: p.prospectUrl };
    default:
      return assertNever(p);
  }
}

/**
 * Opportunities an agent run proposed, one per `OpportunityProposed`, of kind = the agent key. A
 * pitch the outreach agent sent already opened its opportunity (`OutboundConversationStarted`): the
 * proposal, recorded under that id, adds the run and its details and keeps where and when it began.
 */
export async function applyProposalToOpportunities(event: Extract<AgentRunEvent, { type: 'OpportunityProposed' }>, w: ProjectionWriter): Promise<void> {
  const d = event.data;
  const pitched = d.proposal.kind === 'outreach' ? await w.get<OpportunityDoc>(OPPORTUNITIES, d.opportunityId) : null;
  const opportunity: OpportunityDoc = {
    id: d.opportunityId,
    siteId: d.siteId,
    teamId: d.teamId,
    kind: d.agentKey,
    conversationId: d.proposal.kind === 'outreach' ? d.proposal.conversationId : null,
    entrySource: pitched?.entrySource ?? null,
    ...askOfProposal(d.proposal),
    stub: false,
    details: d.proposal,
    runId: d.runId,
    createdAt: pitched?.createdAt ?? d.proposedAt,
  };
  await w.put(OPPORTUNITIES, opportunity);
}
