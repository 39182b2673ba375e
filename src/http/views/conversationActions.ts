import type { FastifyInstance } from 'fastify';
import type { ConversationStatus } from '../../domain/conversation.ts';
import { notFound, validationError } from '../../domain/errors.ts';
import { getConversation } from '../../readModels/conversations.ts';
import type { SiteDoc } from '../../readModels/sites.ts';
import type { Credential } from '../credentials.ts';
import { type FoundConversation, actOnConversation, conversationOnSite, replyAsPerson as sendPersonsReply } from '../inboxActions.ts';
import { idempotencyScope } from '../routes/ingestion.ts';

/**
 * A person's actions on a conversation as the REST routes and the MCP tools answer them: the
 * actions themselves (shared with the dashboard) are in `../inboxActions.ts`; this adds the
 * not-found error and answers once the read models include the write.
 */

export type ConversationRef = FoundConversation;

/** The conversation on the site; any other (another site's included) is not found. */
export async function findConversation(app: FastifyInstance, siteId: string, conversationId: string): Promise<ConversationRef> {
  const found = await conversationOnSite(app, siteId, conversationId);
  if (!found) throw notFound('Conversation not found.');
  return found;
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
  const { credential } = input;
  const outcome = await sendPersonsReply(app, {
    found: input.ref,
    site: input.site,
    text: input.text,
    subject: input.subject,
    idempotency: input.idempotencyKey ? { scope: idempotencyScope(credential), key: input.idempotencyKey } : null,
  });
  const conversation = await conversationStateAfter(app, outcome.position, input.ref.doc.id);
  return { status: outcome.status, message: outcome.message, conversation };
}

export async function changeStatusAsPerson(app: FastifyInstance, input: { ref: ConversationRef; status: ConversationStatus; resolutionOutcome?: string; by: string }) {
  // Refused rather than dropped: a caller that sends one expects it to reach the webhook.
  if (input.status === 'open' && input.resolutionOutcome !== undefined) {
    throw validationError('resolutionOutcome: only with a status the webhook announces (resolved, declined, awaiting_human); reopening emits no event to carry it.');
  }
  const action = { type: 'status' as const, status: input.status, resolutionOutcome: input.resolutionOutcome ?? 'manual' };
  const { position } = await actOnConversation(app, input.ref, action, input.by);
  return { conversation: await conversationStateAfter(app, position, input.ref.doc.id) };
}

export const SIMPLE_ACTIONS = ['takeover', 'handback', 'read', 'unread'] as const;
export type SimpleAction = (typeof SIMPLE_ACTIONS)[number];

/** Take-over, hand-back and the read marks: no input beyond the conversation. */
export async function runSimpleAction(app: FastifyInstance, action: SimpleAction, input: { ref: ConversationRef; by: string }) {
  const { position } = await actOnConversation(app, input.ref, { type: action }, input.by);
  return { conversation: await conversationStateAfter(app, position, input.ref.doc.id) };
}
