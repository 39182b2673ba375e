import {
  type Actor,
  type ConversationTarget,
  type ReplyOutcome,
  changeConversationStatus,
  handBackConversation,
  markConversationRead,
  markConversationUnread,
  replyToConversation,
  takeOverConversation,
} from '../commands/conversations.ts';
import type { ConversationStatus } from '../domain/conversation.ts';
import { assertNever } from '../domain/decider.ts';
import { replySubject } from '../domain/outreachAgent.ts';
import { getAgentSettings } from '../readModels/agentSettings.ts';
import { type ConversationDoc, getConversation } from '../readModels/conversations.ts';
import { type MessageDoc, getMessage, listMessagesOfConversation } from '../readModels/messages.ts';
import type { SiteDoc } from '../readModels/sites.ts';
import type { CommandContext } from '../commands/context.ts';
import type { Services } from '../services.ts';
import { isServiceId } from './schemas.ts';

/**
 * The inbox actions a person takes, shared by the REST routes (`routes/conversationActions.ts`) and
 * the dashboard's inbox page: the same lookups, the same commands.
 */

/** What the actions use: the command ports, the read models, the config and the mail port (the app's decorations). */
export type InboxServices = CommandContext & Pick<Services, 'readModels' | 'config' | 'mailer'>;

export interface FoundConversation {
  doc: ConversationDoc;
  target: ConversationTarget;
}

/** The conversation with this id on this site, or null: another site's is not told apart from an unknown one. */
export async function conversationOnSite(services: Pick<Services, 'readModels'>, siteId: string, conversationId: string): Promise<FoundConversation | null> {
  const doc = isServiceId(conversationId) ? await getConversation(services.readModels, conversationId) : null;
  if (!doc || doc.siteId !== siteId) return null;
  return { doc, target: { conversationId: doc.id, siteId: doc.siteId, teamId: doc.teamId } };
}

/** Every action but the reply. */
export type ConversationAction =
  | { type: 'status'; status: ConversationStatus; resolutionOutcome: string }
  | { type: 'takeover' }
  | { type: 'handback' }
  | { type: 'read' }
  | { type: 'unread' };

export function actOnConversation(services: CommandContext, found: FoundConversation, action: ConversationAction, by: Actor): Promise<{ position: bigint | null }> {
  const conversation = found.target;
  switch (action.type) {
    case 'status':
      return changeConversationStatus(services, { conversation, newStatus: action.status, resolutionOutcome: action.resolutionOutcome });
    case 'takeover':
      return takeOverConversation(services, { conversation, by });
    case 'handback':
      return handBackConversation(services, { conversation, by });
    case 'read':
      return markConversationRead(services, { conversation, lastInboundMessageId: found.doc.lastInboundMessageId ?? null, by });
    case 'unread':
      return markConversationUnread(services, { conversation, by });
    default:
      return assertNever(action);
  }
}

/** The conversation's last outbound message that went out (else the last one written), if any. */
async function lastMailSent(services: InboxServices, siteId: string, conversationId: string): Promise<MessageDoc | null> {
  const outbound = (await listMessagesOfConversation(services.readModels, siteId, conversationId)).filter((m) => m.direction === 'outbound');
  return outbound.findLast((m) => m.deliveryStatus === 'sent') ?? outbound.at(-1) ?? null;
}

/**
 * A person's reply: onto the thread of the latest inbound message (without one, of the last mail sent), from the outreach agent's sender
 * name (or the site's domain), subject `Re: ` and that message's subject unless one is given.
 */
export async function replyAsPerson(
  services: InboxServices,
  input: { found: FoundConversation; site: SiteDoc; text: string; subject?: string; idempotency: { scope: string; key: string } | null },
): Promise<ReplyOutcome> {
  const { doc, target } = input.found;
  const lastInbound = doc.lastInboundMessageId ? await getMessage(services.readModels, doc.lastInboundMessageId) : null;
  // Without a message of the prospect's to answer (a pitch nobody answered yet, or only a team
  // member's forward, whose ids the prospect never saw), it threads onto the last mail the prospect got.
  const inbound = lastInbound && !lastInbound.forwarded ? lastInbound : ((await lastMailSent(services, input.site.id, target.conversationId)) ?? lastInbound);
  const settings = await getAgentSettings(services.readModels, input.site.id, 'outreach');
  const config = services.config;
  return replyToConversation(services, {
    conversation: target,
    site: input.site,
    fromName: settings?.senderName?.trim() || input.site.domain,
    to: { name: doc.contactName, address: doc.contactEmail },
    inbound,
    subject: input.subject ?? replySubject(inbound?.subject ?? doc.subject),
    subjectChosen: input.subject !== undefined,
    text: input.text,
    idempotency: input.idempotency,
    sending: {
      fromLocalPart: config.AGENT_FROM_LOCAL_PART,
      mailDomain: config.MAIL_DOMAIN,
      maxAttempts: config.AGENT_SEND_ATTEMPTS,
      baseMs: config.AGENT_RETRY_BASE_MS,
    },
  });
}
