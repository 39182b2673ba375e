import {
  type AgentSkipReason,
  type ConversationEvent,
  ConversationRuleError,
  type ReplyDraft,
  conversationDecider,
  conversationStream,
  replyInFlight,
} from '../../domain/conversation.ts';
import { isSuppressed } from '../../domain/suppression.ts';
import { normaliseEmail } from '../../domain/email.ts';
import {
  ANSWERED_FOR_EVERY_ASK,
  ANSWERED_IN_FIRST_CONVERSATION,
  FIRST_CONVERSATION_REPLY_NOT_SENT,
  NOT_THE_CONTACT,
  ONE_REPLY_MARKS,
  THANKS_ON_THREAD,
  type TriageDecision,
  decisionOn,
  decisionsAgree,
  replyPrecondition,
  replyRfcMessageId,
  senderAddress,
  threadingHeaders,
  withDraftHash,
} from '../../domain/outreachAgent.ts';
import { aggregateStream } from '../../commands/aggregateStream.ts';
import { suppressContact } from '../../commands/suppression.ts';
import { bounceAddress } from '../../domain/bounceAddress.ts';
import type { Drafter } from '../../ports/drafter.ts';
import type { Triage } from '../../ports/triage.ts';
import type { AgentDeps } from './agentDeps.ts';
import { commandOnReadState } from './commandOnReadState.ts';
import { conversationHistory, otherAskTaken } from './otherAsks.ts';
import type { DispatchFacts } from './dispatchFacts.ts';
import type { Ask } from '../../domain/ingestion.ts';

export interface TriageOutcomeRecorded {
  events: ConversationEvent[];
  /** The reply this worker claimed the first attempt of, to send now. */
  claimed: { conversationId: string; messageId: string; attempt: number } | null;
  /** The reply drafted without its first attempt (`claimFirstAttempt: false`), for the sender to claim and send. */
  drafted: { conversationId: string; messageId: string } | null;
  /**
   * Not decided yet: a reply on the conversation is being sent (or its sender died while sending),
   * and its outcome sets the status the dispatch is decided on. The worker takes it up again later.
   */
  deferred: boolean;
}

const DEFERRED: TriageOutcomeRecorded = { events: [], claimed: null, drafted: null, deferred: true };

/**
 * One dispatch: re-check the preconditions, triage, suppress an opt-out, draft the reply, and
 * record all of it on the conversation's stream in one append (with the first send attempt
 * claimed, unless `claimFirstAttempt` is false: the sender claims it when a send slot is free), so
 * the decision is durable before any mail leaves.
 *
 * A pitch with several asks gets one reply, not one per ask, when that is right for every ask: the
 * first conversation triages each ask, and when they all come out alike and every other
 * conversation is still the agent's, its reply names them all; each other conversation waits for
 * that reply's outcome and takes the first's decision (or goes to a person when it was not sent).
 * Otherwise (the asks triaged differently, a person took one over, the agent did not act on the
 * first) each conversation answers its own ask, as for a pitch with one.
 */
export async function triageDispatch(
  deps: AgentDeps & { triage: Triage; drafter: Drafter },
  facts: DispatchFacts,
  metadata: Record<string, unknown>,
  claimFirstAttempt = true,
): Promise<TriageOutcomeRecorded> {
  const { dispatch, message, site, settings } = facts;
  // Stamped when recorded, not when taken up: the model's calls take seconds, and a reply stamped
  // before them was listed before the prospect's message that arrived meanwhile.
  const ref = () => ({ conversationId: dispatch.conversationId, siteId: dispatch.siteId, teamId: dispatch.teamId, now: deps.clock.now().getTime() });
  const stream = conversationStream(dispatch.conversationId);
  // Handled before (a restart before the checkpoint moved, another worker): triage nothing again.
  const known = await aggregateStream(deps.events, stream, conversationDecider);
  if (known.state.dispatches.has(dispatch.dispatchId)) return { events: [], claimed: null, drafted: null, deferred: false };
  // Before any model call: a dispatch waiting for a reply's outcome must not pay for triage twice.
  if (replyInFlight(known.state)) return DEFERRED;
  const skip = async (reason: AgentSkipReason) => {
    const r = await commandOnReadState(deps.events, stream, conversationDecider, known, {
      type: 'SkipDispatch',
      data: { ...ref(), dispatchId: dispatch.dispatchId, inboundMessageId: dispatch.messageId, reason },
    }, metadata);
    return { events: r.events, claimed: null, drafted: null, deferred: false };
  };
  if (!site) return skip('conversation_not_found');

  const record = async (decision: TriageDecision, draft: ReplyDraft | null): Promise<TriageOutcomeRecorded> => {
    let result;
    try {
      result = await commandOnReadState(deps.events, stream, conversationDecider, known, {
        type: 'RecordTriage',
        data: {
          ...ref(),
          dispatchId: dispatch.dispatchId,
          inboundMessageId: dispatch.messageId,
          dispatchedAt: dispatch.occurredAt,
          outcome: decision.outcome,
          classifier: decision.classifier,
          reasons: decision.reasons,
          draft,
          claimFirstAttempt,
        },
      }, metadata);
    } catch (error) {
      // A reply was claimed on the conversation since it was read.
      if (error instanceof ConversationRuleError && error.code === 'REPLY_IN_FLIGHT') return DEFERRED;
      throw error;
    }
    const attempt = result.events.find((e) => e.type === 'ReplySendAttempted');
    const drafted = result.events.find((e) => e.type === 'ReplyDrafted');
    return {
      events: result.events,
      claimed: attempt ? { conversationId: dispatch.conversationId, messageId: attempt.data.messageId, attempt: attempt.data.attempt } : null,
      drafted: drafted && !attempt ? { conversationId: dispatch.conversationId, messageId: drafted.data.messageId } : null,
      deferred: false,
    };
  };

  if (facts.answeredBy) {
    // Before the preconditions: the first conversation's decision was taken while they held, and
    // following it sends nothing (its opt-out has suppressed the contact by now, say).
    const first = decisionOn(await conversationHistory(deps.events, facts.answeredBy), dispatch.messageId);
    if (first === null) return DEFERRED;
    if (first !== 'skipped' && first.reasons.includes(ANSWERED_FOR_EVERY_ASK)) {
      // Its status follows the reply's outcome, as the first's does.
      if (first.reply === 'pending') return DEFERRED;
      const reasons = [...first.reasons.filter((r) => r !== ANSWERED_FOR_EVERY_ASK), ANSWERED_IN_FIRST_CONVERSATION];
      if (first.reply === 'failed') return record({ outcome: 'needs_human', classifier: first.classifier, reasons: [...reasons, FIRST_CONVERSATION_REPLY_NOT_SENT] }, null);
      return record({ outcome: first.outcome, classifier: first.classifier, reasons }, null);
    }
  }

  const reason = replyPrecondition({
    senderEmail: message.from,
    suppressed: isSuppressed(facts.suppression, message.from),
    site,
    settings,
    sendingDomainVerified: site.sendingDomainVerified,
  });
  if (reason) return skip(reason);
  // Whether the sender is the conversation's contact is decided below: not knowing the contact yet
  // (the read models behind), the dispatch waits rather than let anyone on the thread decide.
  if (facts.contactEmail === undefined) return DEFERRED;

  const triageOf = async (ask: Ask | null): Promise<TriageDecision> => {
    const decided = await deps.triage.triage({
      subject: message.subject,
      bodyText: message.bodyText,
      from: message.from,
      fromName: message.fromName,
      siteDomain: site.domain,
      isReply: message.threaded,
      ask,
    });
    // A model's reasons come from the pitch's words: they must not name the service's own marks.
    return { ...decided, reasons: decided.reasons.filter((r) => !ONE_REPLY_MARKS.includes(r)) };
  };
  let decision = await triageOf(facts.ask);
  let asks = facts.ask ? [facts.ask] : [];
  let answersFor: string[] | null = null;
  const othersStillTheAgents = async () =>
    (await otherAskTaken(deps.events, facts.otherAsks.map((o) => o.conversationId))) === null;
  if (facts.otherAsks.length > 0 && (await othersStillTheAgents())) {
    const others = await Promise.all(facts.otherAsks.map((o) => triageOf(o.ask)));
    const replies = (d: TriageDecision) => needsReply(d, settings.declineReplies);
    // Checked again after the model calls: a person may have taken one over meanwhile.
    if (decisionsAgree([decision, ...others], replies) && (await othersStillTheAgents())) {
      decision = { ...decision, reasons: [...decision.reasons, ANSWERED_FOR_EVERY_ASK] };
      asks = [...asks, ...facts.otherAsks.flatMap((o) => (o.ask ? [o.ask] : []))];
      answersFor = facts.otherAsks.map((o) => o.conversationId);
    }
  }

  if (decision.outcome === 'opt_out') {
    // Suppress first: if the worker stops before the triage is recorded, the retry finds the
    // sender already suppressed (the same reason again records nothing) and records the triage.
    await suppressContact(deps, { teamId: dispatch.teamId, teamSiteIds: [dispatch.siteId], email: message.from, reason: 'opted_out', source: 'inbound_classifier', siteId: dispatch.siteId }, metadata);
  }

  if (facts.contactEmail !== null && normaliseEmail(message.from) !== normaliseEmail(facts.contactEmail)) {
    // Someone else on the contact's thread: their own opt-out is honoured above (their address only),
    // and whatever they wrote goes to a person, for the contact's conversation.
    return record({ outcome: 'needs_human', classifier: decision.classifier, reasons: [...decision.reasons.filter((r) => r !== THANKS_ON_THREAD), NOT_THE_CONTACT] }, null);
  }

  let draft: ReplyDraft | null = null;
  if (needsReply(decision, settings.declineReplies)) {
    const written = await deps.drafter.draft({
      outcome: decision.outcome,
      subject: message.subject,
      bodyText: message.bodyText,
      from: message.from,
      fromName: message.fromName,
      asks,
      siteDomain: site.domain,
      settings: { senderName: settings.senderName, signature: settings.signature, tone: settings.tone },
    });
    const messageId = deps.newId();
    draft = withDraftHash({
      messageId,
      rfcMessageId: replyRfcMessageId(messageId, site.domain),
      from: { name: settings.senderName ?? site.domain, address: senderAddress(deps.fromLocalPart, site.domain) },
      to: { name: message.fromName, address: message.from },
      subject: written.subject,
      bodyText: written.text,
      ...threadingHeaders(message),
      returnPath: bounceAddress(deps.secrets, messageId, deps.mailDomain),
      drafter: written.drafter,
      ...(answersFor ? { answersFor } : {}),
    });
  }

  return record(decision, draft);
}

/**
 * Which triaged messages get a reply: an accepted pitch (not a plain thank-you on the thread), and
 * a declined one when the site answers declines (not when the prospect withdrew).
 */
function needsReply(decision: { outcome: string; reasons: string[] }, declineReplies: boolean): decision is { outcome: 'accept' | 'decline'; reasons: string[] } {
  if (decision.outcome === 'accept') return !decision.reasons.includes(THANKS_ON_THREAD);
  if (decision.outcome === 'decline') return declineReplies && !decision.reasons.includes('prospect_withdrew');
  return false;
}
