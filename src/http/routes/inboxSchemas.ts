import { z } from 'zod';
import { CONVERSATION_STATUSES } from '../../domain/conversation.ts';
import type { ConversationDoc } from '../../readModels/conversations.ts';
import type { MessageDoc } from '../../readModels/messages.ts';
import { OPPORTUNITY_KINDS, type OpportunityDoc } from '../../readModels/opportunities.ts';
import { opportunityProposalSchema } from '../../domain/eventSchemas.ts';
import type { SuppressionDoc } from '../../readModels/suppressions.ts';

/** The inbox API's objects, and the one mapping from each read-model document to them. */

const isoTimestamp = z.string().meta({ format: 'date-time' });
export const ENTRY_SOURCES = ['forwarded_actionable', 'forwarded_unactionable', 'direct_inbound_external', 'outbound_pitch'] as const;

export const conversationObject = z.object({
  id: z.string(),
  siteId: z.string(),
  opportunityId: z.string(),
  entrySource: z.enum(ENTRY_SOURCES),
  status: z.enum(CONVERSATION_STATUSES),
  contactEmail: z.string(),
  contactName: z.string().nullable(),
  subject: z.string(),
  unread: z.boolean(),
  aiPaused: z.boolean(),
  skipReason: z.string().nullable(),
  handledBy: z.enum(['agent', 'human']).meta({ description: 'the Outreach Agent, or a person who took it over' }),
  messageCount: z.number().int(),
  lastMessageAt: isoTimestamp,
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});

export const messageObject = z.object({
  id: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  senderType: z.enum(['recipient', 'agent', 'user']),
  from: z.string(),
  fromName: z.string().nullable(),
  to: z.string().nullable(),
  subject: z.string(),
  bodyText: z.string(),
  bodyHtml: z.string().nullable(),
  messageId: z.string().nullable().meta({ description: 'RFC 5322 Message-Id' }),
  inReplyTo: z.string().nullable(),
  references: z.string().nullable(),
  channel: z.string(),
  receivedAt: isoTimestamp.meta({ description: 'inbound: when the service recorded it (after any extraction, just before it was stored); outbound: when it was written' }),
  deliveryStatus: z.enum(['sending', 'retrying', 'sent', 'failed']).nullable().meta({ description: 'outbound only' }),
  sentAt: isoTimestamp.nullable(),
});

export const opportunityObject = z.object({
  id: z.string(),
  siteId: z.string(),
  kind: z.enum(OPPORTUNITY_KINDS).meta({ description: "inbound_pitch, or the key of the agent that proposed it" }),
  conversationId: z.string().nullable().meta({ description: "the pitch's conversation (or the cold pitch's); null for the content agents" }),
  entrySource: z.enum(ENTRY_SOURCES).nullable().meta({ description: 'inbound pitches only' }),
  targetUrl: z.string().meta({ description: 'the URL the prospect wants linked; empty for a stub' }),
  anchorText: z.string().nullable(),
  suggestedSentence: z.string().nullable(),
  sourceUrl: z.string().nullable().meta({ description: 'the page of the site the link would go on' }),
  stub: z.boolean().meta({ description: 'true when no ask was extracted' }),
  details: opportunityProposalSchema.nullable().meta({ description: "an agent's proposal as it made it (its fields depend on kind); null for an inbound pitch" }),
  runId: z.string().nullable().meta({ description: 'the agent run that proposed it' }),
  createdAt: isoTimestamp,
});

export const statusChangeObject = z.object({
  from: z.string(),
  to: z.string(),
  by: z.string().meta({ description: 'agent, user or recipient' }),
  outcome: z.string().nullable(),
  at: isoTimestamp,
});

export const conversationDetail = conversationObject.extend({
  statusHistory: z.array(statusChangeObject),
  lastTriage: z.object({ outcome: z.string(), classifier: z.string() }).nullable(),
  opportunity: opportunityObject.nullable().meta({ description: 'the link opportunity; null when there is none, or for a credential without opportunities:read (opportunityId is always given)' }),
  messages: z.array(messageObject),
});

export const suppressionObject = z.object({
  email: z.string(),
  reason: z.string(),
  source: z.string(),
  suppressedAt: isoTimestamp,
});

export const conversationOf = (d: ConversationDoc): z.infer<typeof conversationObject> => ({
  id: d.id,
  siteId: d.siteId,
  opportunityId: d.opportunityId,
  entrySource: d.entrySource,
  status: d.status as z.infer<typeof conversationObject>['status'],
  contactEmail: d.contactEmail,
  contactName: d.contactName,
  subject: d.subject,
  unread: d.unread === true,
  aiPaused: d.aiPaused,
  skipReason: d.skipReason,
  handledBy: d.handledBy ?? 'agent',
  messageCount: d.messageCount,
  lastMessageAt: d.lastMessageAt,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt ?? d.lastMessageAt,
});

export const messageOf = (m: MessageDoc): z.infer<typeof messageObject> => ({
  id: m.id,
  direction: m.direction,
  senderType: m.senderType,
  from: m.from,
  fromName: m.fromName,
  to: m.to ?? null,
  subject: m.subject,
  bodyText: m.bodyText,
  bodyHtml: m.bodyHtml,
  messageId: m.externalMessageId,
  inReplyTo: m.inReplyTo,
  references: m.references,
  channel: m.channel,
  receivedAt: m.receivedAt,
  deliveryStatus: m.deliveryStatus ?? null,
  sentAt: m.sentAt ?? null,
});

export const opportunityOf = (o: OpportunityDoc): z.infer<typeof opportunityObject> => ({
  id: o.id,
  siteId: o.siteId,
  kind: o.kind ?? 'inbound_pitch',
  conversationId: o.conversationId,
  entrySource: o.entrySource,
  targetUrl: o.targetUrl,
  anchorText: o.anchorText,
  suggestedSentence: o.suggestedSentence,
  sourceUrl: o.sourceUrl,
  stub: o.stub,
  details: o.details ?? null,
  runId: o.runId ?? null,
  createdAt: o.createdAt,
});

export const suppressionOf = (s: SuppressionDoc): z.infer<typeof suppressionObject> => ({ email: s.email, reason: s.reason, source: s.source, suppressedAt: s.suppressedAt });
