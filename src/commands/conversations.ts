import { createHash, randomUUID } from 'node:crypto';
import {
  type ConversationCommand,
  type ConversationEvent,
  type ConversationStatus,
  ConversationRuleError,
  conversationDecider,
  conversationStream,
} from '../domain/conversation.ts';
import { ServiceError, idempotencyKeyReused, serviceUnavailable } from '../domain/errors.ts';
import { conversationEventSchemas } from '../domain/eventSchemas.ts';
import { replyRfcMessageId, senderAddress, threadingHeaders, withDraftHash } from '../domain/outreachAgent.ts';
import { type MailAddress, type Mailer, withSendSlot } from '../ports/mailer.ts';
import type { CommandContext } from './context.ts';
import { type CommandResult, TURN_MAX_WAIT_MS, handleCommand } from './handleCommand.ts';
import { sendDraft } from './sendDraft.ts';
import { bounceAddress } from '../domain/bounceAddress.ts';
import { mailRefusal, mailRefused } from './mailGate.ts';
import { parseEvent } from '../lib/parseEvent.ts';
import { latestPosition } from '../lib/latestPosition.ts';

/** The conversation an action is on, as the caller found it (its site checked). */
export interface ConversationTarget {
  conversationId: string;
  siteId: string;
  teamId: string;
}

/** Who acted: the credential's or user's id, kept in take-over and read marks (the events' metadata names them with their kind: `ctx.actor`). */
export type Actor = string | null;

/** This API process, as the claimant of the send attempts it starts (the agent worker waits for it before recovering one). */
const API_INSTANCE = `api/${randomUUID()}`;

async function decide(ctx: CommandContext, target: ConversationTarget, command: ConversationCommand): Promise<CommandResult<ConversationEvent>> {
  try {
    return await handleCommand(ctx, conversationStream(target.conversationId), conversationDecider, command, { workerInstance: API_INSTANCE });
  } catch (error) {
    if (error instanceof ConversationRuleError) throw new ServiceError(error.code, error.message);
    throw error;
  }
}

const ref = (ctx: CommandContext, target: ConversationTarget) => ({ ...target, now: ctx.clock.now().getTime() });

/** `ChangeConversationStatus` by a person: any status, `open` reopens; the same status again records nothing. */
export function changeConversationStatus(
  ctx: CommandContext,
  input: { conversation: ConversationTarget; newStatus: ConversationStatus; resolutionOutcome: string },
) {
  return decide(ctx, input.conversation, {
    type: 'ChangeConversationStatus',
    data: { ...ref(ctx, input.conversation), newStatus: input.newStatus, resolvedBy: 'user', resolutionOutcome: input.resolutionOutcome },
  });
}

/** A person takes the conversation over: the agent skips its later dispatches (`AgentSkipped`, `taken_over`). */
export const takeOverConversation = (ctx: CommandContext, input: { conversation: ConversationTarget; by: Actor }) =>
  decide(ctx, input.conversation, { type: 'TakeOver', data: { ...ref(ctx, input.conversation), by: input.by } });

/** Hands the conversation back to the agent, from the next prospect message on. */
export const handBackConversation = (ctx: CommandContext, input: { conversation: ConversationTarget; by: Actor }) =>
  decide(ctx, input.conversation, { type: 'HandBack', data: { ...ref(ctx, input.conversation), by: input.by } });

/** Marks the conversation read up to its latest inbound message as the caller knows it. */
export const markConversationRead = (ctx: CommandContext, input: { conversation: ConversationTarget; lastInboundMessageId: string | null; by: Actor }) =>
  decide(ctx, input.conversation, { type: 'MarkRead', data: { ...ref(ctx, input.conversation), lastInboundMessageId: input.lastInboundMessageId, by: input.by } });

export const markConversationUnread = (ctx: CommandContext, input: { conversation: ConversationTarget; by: Actor }) =>
  decide(ctx, input.conversation, { type: 'MarkUnread', data: { ...ref(ctx, input.conversation), by: input.by } });

export type DeliveryStatus = 'sending' | 'sent' | 'retrying' | 'failed';

export interface ReplyInput {
  conversation: ConversationTarget;
  site: { domain: string; forwardingToken: string };
  /** From name: the outreach agent's sender name, or the site's domain. */
  fromName: string;
  to: MailAddress;
  /** The latest inbound message, whose thread the reply continues; null when none is known. */
  inbound: { externalMessageId: string | null; references: string | null; inReplyTo: string | null } | null;
  subject: string;
  /** Whether the client chose the subject (else it follows the thread, and a repeat of the key may find another one there). */
  subjectChosen?: boolean;
  text: string;
  idempotency: { scope: string; key: string } | null;
  /** The agent's sending settings: From local part, MAIL_DOMAIN (where bounces return), the retry policy of a temporary failure. */
  sending: { fromLocalPart: string; mailDomain: string; maxAttempts: number; baseMs: number };
}

export interface ReplyOutcome {
  /** 201 for a new reply, 200 for a repeat of an Idempotency-Key (nothing sent again). */
  status: 201 | 200;
  message: { id: string; rfcMessageId: string; deliveryStatus: DeliveryStatus };
  /** Global position of the last event this call appended; for a repeat, of the last event of the conversation it read. */
  position: bigint | null;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A reply's id under an Idempotency-Key: the same key on the same conversation names the same reply. */
export function replyIdForKey(scope: string, conversationId: string, key: string): string {
  const digest = createHash('sha256').update(`reply\n${scope}\n${conversationId}\n${key}`).digest();
  return Array.from(digest.subarray(0, 26), (b) => CROCKFORD[b % 32]).join('');
}

/**
 * A person's reply: drafted with its first attempt claimed in one append (`StartReply`), so the
 * Message-Id is fixed before the mail leaves; sent through the mail port; its outcome recorded. A
 * temporary failure is recorded with a retryAt: the agent worker, which follows the log, retries it.
 */
export async function replyToConversation(ctx: CommandContext & { mailer: Mailer }, input: ReplyInput): Promise<ReplyOutcome> {
  const { conversation: target } = input;
  const messageId = input.idempotency ? replyIdForKey(input.idempotency.scope, target.conversationId, input.idempotency.key) : ctx.newId();
  // What the client sent: a repeat whose thread has a newer message since derives another subject, and is still a repeat.
  const request = { text: input.text, subject: input.subjectChosen ? input.subject : null };
  const known = input.idempotency ? await recordedReply(ctx, target, messageId, request) : null;
  if (known) return known;
  const draft = withDraftHash({
    messageId,
    rfcMessageId: replyRfcMessageId(messageId, input.site.domain),
    from: { name: input.fromName, address: senderAddress(input.sending.fromLocalPart, input.site.domain) },
    to: input.to,
    subject: input.subject,
    bodyText: input.text,
    ...threadingHeaders(input.inbound ?? { externalMessageId: null, references: null, inReplyTo: null }),
    returnPath: bounceAddress(ctx.secrets, messageId, input.sending.mailDomain),
    drafter: 'user',
  });
  // Claimed only once the mailer can send it at once (see Mailer.reserve); the gate is read just before the claim.
  const wait = { signal: AbortSignal.timeout(TURN_MAX_WAIT_MS), onAbort: () => serviceUnavailable('Every connection to the mail relay is busy; retry.', 1) };
  return withSendSlot(ctx.mailer, async () => {
    const refusal = await mailRefusal(ctx, { teamId: target.teamId, siteId: target.siteId, to: input.to.address });
    if (refusal) throw mailRefused(refusal);
    const started = await decide(ctx, target, { type: 'StartReply', data: { ...ref(ctx, target), draft } });
    // A concurrent request with the same key drafted it first: answer as its repeat.
    if (started.events.length === 0) return (await recordedReply(ctx, target, messageId, request))!;

    const { maxAttempts, baseMs } = input.sending;
    const result = await sendDraft(ctx.mailer, draft, () => (maxAttempts > 1 ? ctx.clock.now().getTime() + baseMs : null));
    const recorded = await decide(ctx, target, { type: 'RecordSendResult', data: { ...ref(ctx, target), messageId, attempt: 1, result } });
    const deliveryStatus: DeliveryStatus = result.ok ? 'sent' : result.retryAt === null ? 'failed' : 'retrying';
    return { status: 201, message: { id: messageId, rfcMessageId: draft.rfcMessageId, deliveryStatus }, position: latestPosition(recorded.position, started.position) };
  }, wait);
}

/** The reply already recorded under this id, as a repeat answers it; a different text under the same key is refused. */
async function recordedReply(
  ctx: CommandContext,
  target: ConversationTarget,
  messageId: string,
  request: { text: string; subject: string | null },
): Promise<ReplyOutcome | null> {
  const events = await ctx.events.readStream(conversationStream(target.conversationId));
  let found: { rfcMessageId: string; subject: string; bodyText: string } | null = null;
  let deliveryStatus: DeliveryStatus = 'sending';
  for (const recorded of events) {
    const event = parseEvent(recorded, conversationEventSchemas);
    if (!event || !('messageId' in event.data) || event.data.messageId !== messageId) continue;
    if (event.type === 'ReplyDrafted') found = { rfcMessageId: event.data.rfcMessageId, subject: event.data.subject, bodyText: event.data.bodyText };
    else if (event.type === 'ReplySent') deliveryStatus = 'sent';
    else if (event.type === 'ReplySendFailed') deliveryStatus = event.data.retryAt === null ? 'failed' : 'retrying';
    else if (event.type === 'ReplySendAttempted') deliveryStatus = 'sending';
  }
  if (!found) return null;
  if (found.bodyText !== request.text || (request.subject !== null && found.subject !== request.subject)) throw idempotencyKeyReused();
  // The repeat's answer waits, as the first's did, for the read models to include what it read (the first may still be answering).
  return { status: 200, message: { id: messageId, rfcMessageId: found.rfcMessageId, deliveryStatus }, position: events.at(-1)?.position ?? null };
}
