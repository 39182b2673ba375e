/**
 * The domain facts behind the five webhook event kinds. Ingestion appends the first two, the agent
 * and contact handling the other three; the webhook engine turns each into `outreach.<kind>`.
 * Every one carries the site, the team and the moment it happened (epoch milliseconds), so a
 * delivery needs no other lookup to build its envelope.
 */
export interface OutreachEventBase {
  siteId: string;
  teamId: string;
  /** Epoch milliseconds. */
  occurredAt: number;
}

/** `outbound_pitch`: a conversation the Outreach Agent opened with a cold pitch (src/agentWork/outreach.ts); replies thread into it. */
export type EntrySource = 'forwarded_actionable' | 'forwarded_unactionable' | 'direct_inbound_external' | 'outbound_pitch';

export type OutreachEvent =
  | { type: 'OpportunityCreated'; data: OutreachEventBase & { opportunityId: string; conversationId: string; entrySource: EntrySource } }
  | {
      type: 'MessageReceived';
      data: OutreachEventBase & { conversationId: string; opportunityId: string; messageId: string; entrySource: EntrySource };
    }
  | {
      type: 'ReplySent';
      data: OutreachEventBase & {
        conversationId: string;
        messageId: string;
        mailProviderMessageId: string;
        triage: string;
        autoResolved: boolean;
        sendOutcome: string;
        /** `user`: a person's reply through the conversation actions, which the webhook does not announce. */
        senderType?: 'agent' | 'user';
      };
    }
  | {
      type: 'ConversationStatusChanged';
      data: OutreachEventBase & {
        conversationId: string;
        oldStatus: string;
        newStatus: 'resolved' | 'declined' | 'awaiting_human';
        resolvedBy: string;
        resolutionOutcome: string;
      };
    }
  | { type: 'ContactSuppressed'; data: OutreachEventBase & { email: string; reason: string; source: string; upgraded: boolean } };

export type OutreachEventType = OutreachEvent['type'];

/** Domain event type → webhook event type. */
export const WEBHOOK_TYPE_OF = {
  OpportunityCreated: 'outreach.opportunity_created',
  MessageReceived: 'outreach.message_received',
  ReplySent: 'outreach.reply_sent',
  ConversationStatusChanged: 'outreach.conversation_status_changed',
  ContactSuppressed: 'outreach.contact_suppressed',
} as const satisfies Record<OutreachEventType, string>;
