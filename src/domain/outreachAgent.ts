import { createHash } from 'node:crypto';
import { type AgentSettings, agentGate } from './agents.ts';
import { decideAiPause } from './aiPause.ts';
import type { AgentSkipReason, ConversationEvent, ReplyDraft, TriageOutcome } from './conversation.ts';
import { MAIL_MESSAGE_ID_SHAPE, normaliseMessageId, parseMessageIds } from './ingestion.ts';

/** What the Outreach Agent must know about a site and a contact before it may reply. */
export interface ReplyPreconditionFacts {
  senderEmail: string;
  suppressed: boolean;
  site: { licensed: boolean; plan: string };
  settings: AgentSettings;
  sendingDomainVerified: boolean;
}

/**
 * The spec's preconditions, checked again when the worker takes a dispatch: ingestion checked them
 * too, but any may have stopped holding since (the agent turned off, the contact opted out on
 * another thread, the domain's verification withdrawn).
 */
export function replyPrecondition(facts: ReplyPreconditionFacts): AgentSkipReason | null {
  const pause = decideAiPause({
    senderEmail: facts.senderEmail,
    suppressed: facts.suppressed,
    agentGate: agentGate(facts.site, facts.settings, 'outreach', 'reply'),
    sendingDomainVerified: facts.sendingDomainVerified,
    // The conversation's own state (taken over, awaiting a person, closed) is the decider's to check.
    conversation: null,
  });
  return pause.aiPaused ? pause.skipReason : null;
}

/** A triage the agent recorded on a message: what it decided, by which classifier, and why. */
export interface TriageDecision {
  outcome: TriageOutcome;
  /** Which classifier decided, recorded for auditors: `offline-v1`, `openai:<model>`, or a fallback. */
  classifier: string;
  /** Short machine-readable reasons, such as `paid_link_demand` or `opt_out_phrase`. */
  reasons: string[];
}

/** The reason of an `accept` on a thread that is a thanks or an agreement: it gets no reply. */
export const THANKS_ON_THREAD = 'thanks_on_thread';
/** The reason of a reply on a thread that is no such thanks: a person reads it. */
export const THREAD_REPLY = 'thread_reply';
/**
 * The reason of a message on a thread from someone other than the conversation's contact: anyone who
 * saw the thread's ids (a person copied in, a relay) can write in it, and must not decline the
 * contact's conversation (an opt-out of their own) or have the agent answer them. A person reads it.
 */
export const NOT_THE_CONTACT = 'not_the_contact';

/**
 * A pitch with several asks opens a conversation per ask and gets one reply. The first conversation
 * records `ANSWERED_FOR_EVERY_ASK` when its reply answers them all (every ask triaged alike, every
 * other conversation still the agent's); each other conversation then records
 * `ANSWERED_IN_FIRST_CONVERSATION` with the first's decision, or
 * `FIRST_CONVERSATION_REPLY_NOT_SENT` (for a person) when that reply failed for good.
 */
export const ANSWERED_FOR_EVERY_ASK = 'answered_for_every_ask';
export const ANSWERED_IN_FIRST_CONVERSATION = 'answered_in_first_conversation';
export const FIRST_CONVERSATION_REPLY_NOT_SENT = 'first_conversation_reply_not_sent';
/** The service's own marks, which no classifier's reason may carry. */
export const ONE_REPLY_MARKS: readonly string[] = [ANSWERED_FOR_EVERY_ASK, ANSWERED_IN_FIRST_CONVERSATION, FIRST_CONVERSATION_REPLY_NOT_SENT];

/**
 * Why one reply may no longer answer another conversation of the same pitch, or null when it may:
 * only read marks are allowed on that conversation's history. Its stream starts empty (ingestion
 * opens it on the ingestion's own stream) and the agent writes nothing there while it waits for the
 * first conversation's reply, so anything else is a person's act (a take-over, even one handed back;
 * a close, even one reopened; their own reply) or a decision of its own, and it answers for itself.
 */
export function otherAskActedOn(conversationId: string, history: readonly ConversationEvent[]): string | null {
  const acted = history.find((e) => e.type !== 'ConversationMarkedRead' && e.type !== 'ConversationMarkedUnread');
  if (!acted) return null;
  const what: Partial<Record<ConversationEvent['type'], string>> = {
    ConversationTakenOver: 'a person took over',
    ConversationHandedBack: 'a person handed back',
    ConversationReopened: 'a person reopened',
    ReplyDrafted: 'a reply of its own was written on',
  };
  const how = acted.type === 'ConversationStatusChanged' ? `a person set to ${acted.data.newStatus}` : (what[acted.type] ?? `${acted.type} was recorded on`);
  return `${how} conversation ${conversationId}, one of the pitch's other asks`;
}

/**
 * The triage decisions of one message's asks: one reply may answer them all when they have the same
 * outcome and each gets a reply or none alike (a model's free-text reasons may differ).
 */
export const decisionsAgree = (decisions: readonly TriageDecision[], getsReply: (d: TriageDecision) => boolean) =>
  decisions.every((d) => d.outcome === decisions[0]!.outcome && getsReply(d) === getsReply(decisions[0]!));

/**
 * What the agent decided on `inboundMessageId` in a conversation's history: null while it has not
 * taken the message, `skipped` when it did not act (taken over, closed, paused), else its triage
 * and where the reply it drafted for the message stands (`none` when it drafted none).
 */
export function decisionOn(
  history: ConversationEvent[],
  inboundMessageId: string,
): null | 'skipped' | (TriageDecision & { reply: 'none' | 'pending' | 'sent' | 'failed' }) {
  let decision: (TriageDecision & { dispatchId: string }) | null = null;
  let replyId: string | null = null;
  let reply: 'pending' | 'sent' | 'failed' = 'pending';
  for (const event of history) {
    if (decision === null) {
      if (event.type === 'AgentSkipped' && event.data.inboundMessageId === inboundMessageId) return 'skipped';
      if (event.type === 'AgentTriaged' && event.data.inboundMessageId === inboundMessageId) {
        decision = { outcome: event.data.outcome, classifier: event.data.classifier, reasons: event.data.reasons, dispatchId: event.data.dispatchId };
      }
      continue;
    }
    if (event.type === 'ReplyDrafted' && event.data.dispatchId === decision.dispatchId) replyId = event.data.messageId;
    else if (event.type === 'ReplySent' && event.data.messageId === replyId) reply = 'sent';
    else if (event.type === 'ReplySendFailed' && event.data.messageId === replyId && (event.data.permanent || event.data.retryAt === null)) reply = 'failed';
  }
  if (decision === null) return null;
  const { dispatchId: _, ...triage } = decision;
  return { ...triage, reply: replyId === null ? 'none' : reply };
}

/** The agent's address on the site's (verified) sending domain. */
export const senderAddress = (localPart: string, domain: string) => `${localPart}@${domain}`;

/** Our Message-Id for an outbound reply: derived from the reply's own id, so every attempt sends the same one. */
export const replyRfcMessageId = (messageId: string, domain: string) => `<reply.${messageId.toLowerCase()}@${domain}>`;

/**
 * Our message ids among the Message-Id headers in `text` (a delivery report returns the message or its
 * headers): each `replyRfcMessageId` gives back its id, upper case again.
 */
export function returnedReplyIds(text: string): string[] {
  const ids = new Set<string>();
  for (const m of text.matchAll(/^(?:X-Original-)?Message-Id:\s*<reply\.([0-9a-z]{26})@[^>\s]+>/gim)) ids.add(m[1]!.toUpperCase());
  return [...ids];
}

/** 998, RFC 5322's line limit, less `In-Reply-To: <>`: a msg-id cannot be folded, so a longer one would break the line limit. */
const MAX_HEADER_ID_LENGTH = 998 - 'In-Reply-To: <>'.length;
const usableId = (id: string) => id.length <= MAX_HEADER_ID_LENGTH && MAIL_MESSAGE_ID_SHAPE.test(id);

/**
 * In-Reply-To and References of a reply to `inbound` (RFC 5322 §3.6.4): its References, then its own
 * id. Ids that are not ASCII msg-ids (a forwarded mail's odd header, an id stored before ingestion
 * checked them, an internationalised id) or too long for one header line are left out: the mailer
 * refuses them, and the reply must still go.
 */
export function threadingHeaders(inbound: { externalMessageId: string | null; references: string | null; inReplyTo: string | null; forwarded?: boolean }): {
  inReplyTo: string | null;
  references: string[];
} {
  // A forwarded pitch's ids are the team member's forward: the reply starts the prospect's thread.
  if (!inbound.externalMessageId || inbound.forwarded) return { inReplyTo: null, references: [] };
  const own = normaliseMessageId(inbound.externalMessageId);
  const valid = usableId(own);
  const validIds = (header: string | null) => parseMessageIds(header).filter(usableId);
  const chain = validIds(inbound.references);
  if (chain.length === 0) chain.push(...validIds(inbound.inReplyTo));
  const all = [...chain.filter((id) => id !== own), ...(valid ? [own] : [])];
  // At most 20, the thread's root first (RFC 5322 §3.6.4: clients thread a trimmed chain by its first and last ids).
  const refs = (all.length > 20 ? [all[0]!, ...all.slice(-19)] : all).map((id) => `<${id}>`);
  return { inReplyTo: valid ? `<${own}>` : null, references: refs };
}

export const draftSha256 = (subject: string, bodyText: string) => createHash('sha256').update(`${subject}\n\n${bodyText}`).digest('hex');

export type DraftInput = Omit<ReplyDraft, 'draftSha256'>;
export const withDraftHash = (draft: DraftInput): ReplyDraft => ({ ...draft, draftSha256: draftSha256(draft.subject, draft.bodyText) });

/** `Re: <original subject>`, never `Re: Re:`; a forwarded pitch's `Fwd:` is dropped too. One line, bounded: it goes into a header. */
export function replySubject(original: string): string {
  let subject = original.replace(/[\r\n\t\u2028\u2029]+/g, ' ').replace(/\s{2,}/g, ' ').trim().slice(0, 500);
  for (let previous = ''; previous !== subject; ) {
    previous = subject;
    subject = subject.replace(/^(?:re|fwd?|aw|wg|sv|tr)\s*(?:\[\d+\])?\s*:\s*/i, '');
  }
  return `Re: ${subject.slice(0, 200) || 'Your message'}`;
}
