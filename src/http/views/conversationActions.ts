import type { FastifyInstance } from 'fastify';
import {
  type ConversationTarget,
  changeConversationStatus,
  handBackConversation,
  markConversationRead,
  markConversationUnread,
  replyToConversation,
  takeOverConversation,
} from '../../commands/conversations.ts';
import type { ConversationStatus } from '../../domain/conversation.ts';
import { notFound } from '../../domain/errors.ts';
import { replySubject } from '../../domain/outreachAgent.ts';
import { getAgentSettings } from '../../readModels/agentSettings.ts';
import { type ConversationDoc, getConversation } from '../../readModels/conversations.ts';
import { getMessage } from '../../readModels/messages.ts';
import type { SiteDoc } from '../../readModels/sites.ts';
import type { Credential } from '../credentials.ts';
import { idempotencyScope } from '../routes/ingestion.ts';

/**
 * A person's actions on a conversation (reply, status, take-over, read marks), shared by the REST
 * routes and the MCP tools: each finds the conversation on the site, runs the command, and answers
 * once the read models include the write.
 */

const ID_SHAPE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export interface ConversationRef {
  doc: ConversationDoc;
  target: ConversationTarget;
}

/** The conversation on the site; any other (another site's included) is not found. */
export async function findConversation(app: FastifyInstance, siteId: string, conversationId: string): Promise<ConversationRef> {
  const doc = ID_SHAPE.test(conversationId) ? await getConversation(app.readModels, conversationId) : null;
  if (!doc || doc.siteId !== siteId) throw notFound('Conversation not found.');
  return { doc, target: { conversationId: doc.id, siteId: doc.siteId, teamId: doc.teamId } };
}

export interface ConversationState {
  id: string;
  status: ConversationStatus;
  handledBy: 'agent' | 'human';
  unread: boolean;
}

/** The conversation once the read models include `position`. */
export async function conversationStateAfter(app: FastifyInstance, position: bigint | null, conversationId: string): Promise<ConversationState> {
  await app.waitForWrite(position);
  const doc = (await getConversation(app.readModels, conversationId))!;
  return { id: doc.id, status: doc.status as ConversationStatus, handledBy: doc.handledBy ?? 'agent', unread: doc.unread ?? false };
}

/** A person's reply, sent from the site's agent address; an idempotency key makes a repeat answer the first reply. */
export async function replyAsPerson(
  app: FastifyInstance,
  input: { ref: ConversationRef; site: SiteDoc; credential: Credential; text: string; subject?: string; idempotencyKey?: string },
) {
  const { doc, target } = input.ref;
  const { site, credential } = input;
  const inbound = doc.lastInboundMessageId ? await getMessage(app.readModels, doc.lastInboundMessageId) : null;
  const settings = await getAgentSettings(app.readModels, site.id, 'outreach');
  const config = app.config;
  const outcome = await replyToConversation(app, {
    conversation: target,
    site,
    fromName: settings?.senderName?.trim() || site.domain,
    to: { name: doc.contactName, address: doc.contactEmail },
    inbound,
    subject: input.subject ?? replySubject(inbound?.subject ?? doc.subject),
    text: input.text,
    idempotency: input.idempotencyKey ? { scope: idempotencyScope(credential), key: input.idempotencyKey } : null,
    sending: {
      fromLocalPart: config.AGENT_FROM_LOCAL_PART,
      mailDomain: config.MAIL_DOMAIN,
      maxAttempts: config.AGENT_SEND_ATTEMPTS,
      baseMs: config.AGENT_RETRY_BASE_MS,
    },
    by: credential.id,
  });
  const conversation = await conversationStateAfter(app, outcome.position, doc.id);
  return { status: outcome.status, message: outcome.message, conversation };
}

export async function changeStatusAsPerson(app: FastifyInstance, input: { ref: ConversationRef; status: ConversationStatus; resolutionOutcome?: string; by: string }) {
  const { position } = await changeConversationStatus(app, {
    conversation: input.ref.target,
    newStatus: input.status,
    resolutionOutcome: input.resolutionOutcome ?? 'manual',
    by: input.by,
  });
  return { conversation: await conversationStateAfter(app, position, input.ref.doc.id) };
}

export const SIMPLE_ACTIONS = ['takeover', 'handback', 'read', 'unread'] as const;
export type SimpleAction = (typeof SIMPLE_ACTIONS)[number];

/** Take-over, hand-back and the read marks: no input beyond the conversation. */
export async function runSimpleAction(app: FastifyInstance, action: SimpleAction, input: { ref: ConversationRef; by: string }) {
  const { doc, target } = input.ref;
  const by = input.by;
  const { position } =
    action === 'takeover'
      ? await takeOverConversation(app, { conversation: target, by })
      : action === 'handback'
        ? await handBackConversation(app, { conversation: target, by })
        : action === 'read'
          ? await markConversationRead(app, { conversation: target, lastInboundMessageId: doc.lastInboundMessageId ?? null, by })
          : await markConversationUnread(app, { conversation: target, by });
  return { conversation: await conversationStateAfter(app, position, doc.id) };
}
