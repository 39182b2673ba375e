import { type Decider, assertNever } from './decider.ts';
import { ImmutableMap } from './immutableMap.ts';
import type { OutreachEventBase } from './outreachEvents.ts';

/**
 * A conversation's life after ingestion opened it: the agent's decisions on each dispatch, the
 * replies sent, status changes, and whether the agent or a person handles it. One stream per
 * conversation; `ConversationOpened` itself is in the ingestion's stream (one atomic append per
 * ingestion), so an empty conversation stream means "open, handled by the agent".
 *
 * Status transitions (the spec names the statuses; the rest is ours, see docs/agent.md):
 *
 * | from            | to                                   | by            |
 * |-----------------|--------------------------------------|---------------|
 * | open            | resolved, declined, awaiting_human   | agent or user |
 * | awaiting_human  | resolved, declined, open             | user          |
 * | resolved        | declined, awaiting_human, open       | user          |
 * | declined        | resolved, awaiting_human, open       | user          |
 * | resolved/declined | open (`ConversationReopened`)      | the prospect writing again |
 *
 * Refused: the agent acting on a conversation that is not open or that a person has taken over,
 * and any status change while a reply is being sent (its outcome decides the status).
 * Asking for the status it already has is not an error: it records nothing. The same holds for
 * take-over, hand-back and the read marks (see docs/conversationActions.md).
 */
export const conversationStream = (conversationId: string) => `conversation-${conversationId}`;

export const CONVERSATION_STATUSES = ['open', 'resolved', 'declined', 'awaiting_human'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];
export type TerminalStatus = Exclude<ConversationStatus, 'open'>;
export const isTerminal = (s: ConversationStatus): s is TerminalStatus => s !== 'open';

/**
 * What the agent does with a dispatched conversation: `accept` (reply and resolve), `decline`
 * (polite reply or none, resolve as declined), `needs_human` (no reply, `awaiting_human`),
 * `opt_out` (suppress the sender, no reply).
 */
export const TRIAGE_OUTCOMES = ['accept', 'decline', 'needs_human', 'opt_out'] as const;
export type TriageOutcome = (typeof TRIAGE_OUTCOMES)[number];
export type ReplyTriage = TriageOutcome | 'manual' | 'pitch';
export type ResolvedBy = 'agent' | 'user';

/** Why the agent did not act on a dispatch. */
export const AGENT_SKIP_REASONS = [
  'no_reply_sender',
  'contact_suppressed',
  'agent_inactive',
  'auto_reply_disabled',
  'sending_domain_unverified',
  'taken_over',
  'awaiting_human',
  'conversation_not_found',
  /** A person closed the conversation after the message the dispatch is for: their decision stands. */
  'closed_by_user',
] as const;
export type AgentSkipReason = (typeof AGENT_SKIP_REASONS)[number];

/** What is needed to send one reply, fixed before the first attempt so every attempt sends the same mail. */
export interface ReplyDraft {
  /** Our id of the outbound message record. */
  messageId: string;
  /** RFC 5322 Message-Id of the outbound mail, with angle brackets; deterministic, recorded before sending. */
  rfcMessageId: string;
  from: { name: string | null; address: string };
  to: { name: string | null; address: string };
  subject: string;
  bodyText: string;
  inReplyTo: string | null;
  references: string[];
  /** Envelope sender: the mail's own bounce address at MAIL_DOMAIN (`bounceAddress`), so bounces come back as delivery reports about it (the site's forwarding mailbox before). */
  returnPath: string | null;
  drafter: string;
  /** SHA-256 (hex) of subject + body, for auditors. */
  draftSha256: string;
  /**
   * The agent's reply to a pitch with several asks that answers them all: the pitch's other
   * conversations. Each attempt checks they are still the agent's (a person's take-over of one
   * withdraws the reply). Absent on any other reply.
   */
  answersFor?: string[];
}

type Base = OutreachEventBase & { conversationId: string };

export type ConversationEvent =
  /** The Outreach Agent opened this conversation with a cold pitch (the pitch itself is the `ReplyDrafted` after it). */
  | {
      type: 'OutboundConversationStarted';
      data: Base & {
        opportunityId: string;
        contactEmail: string;
        contactName: string | null;
        subject: string;
        prospectUrl: string;
        /** The site's article the pitch offers; null when none matched. */
        offeredUrl: string | null;
        runId: string;
      };
    }
  | { type: 'ConversationReopened'; data: Base & { oldStatus: TerminalStatus; reason: 'prospect_replied' | 'user' } }
  | {
      type: 'AgentTriaged';
      data: Base & { dispatchId: string; inboundMessageId: string; outcome: TriageOutcome; classifier: string; reasons: string[] };
    }
  | { type: 'AgentSkipped'; data: Base & { dispatchId: string; inboundMessageId: string; reason: AgentSkipReason } }
  | {
      type: 'ReplyDrafted';
      data: Base &
        ReplyDraft & {
          /** The dispatch the agent drafted it for; null for a person's reply. */
          dispatchId: string | null;
          direction: 'outbound';
          senderType: 'agent' | 'user';
          /** The triage the reply answers (`accept`, `decline`), `manual` for a person's reply, `pitch` for the agent's cold pitch. */
          triage: ReplyTriage;
        };
    }
  | { type: 'ReplySendAttempted'; data: Base & { messageId: string; attempt: number } }
  | {
      type: 'ReplySendFailed';
      data: Base & { messageId: string; attempt: number; error: string; permanent: boolean; retryAt: number | null };
    }
  | {
      type: 'ReplySent';
      data: Base & {
        messageId: string;
        mailProviderMessageId: string;
        triage: string;
        autoResolved: boolean;
        sendOutcome: 'sent';
        senderType: 'agent' | 'user';
        attempt: number;
      };
    }
  | {
      type: 'ConversationStatusChanged';
      data: Base & { oldStatus: ConversationStatus; newStatus: TerminalStatus; resolvedBy: ResolvedBy; resolutionOutcome: string };
    }
  | { type: 'ConversationTakenOver'; data: Base & { by: string | null } }
  | { type: 'ConversationHandedBack'; data: Base & { by: string | null } }
  /** `upToMessageId`: the latest inbound message the reader had seen; a later one leaves the conversation unread. */
  | { type: 'ConversationMarkedRead'; data: Base & { upToMessageId: string | null; by: string | null } }
  | { type: 'ConversationMarkedUnread'; data: Base & { by: string | null } };

/** Identity of the conversation, from the caller that loaded it; every event carries it. */
export interface ConversationRef {
  conversationId: string;
  siteId: string;
  teamId: string;
  /** Epoch milliseconds. */
  now: number;
}

export type ConversationCommand =
  | {
      type: 'StartOutboundConversation';
      data: ConversationRef & {
        opportunityId: string;
        contactName: string | null;
        prospectUrl: string;
        offeredUrl: string | null;
        runId: string;
        draft: ReplyDraft;
      };
    }
  | { type: 'SkipDispatch'; data: ConversationRef & { dispatchId: string; inboundMessageId: string; reason: AgentSkipReason } }
  | {
      type: 'RecordTriage';
      data: ConversationRef & {
        dispatchId: string;
        inboundMessageId: string;
        /** Epoch ms of the dispatch (its ingestion): a person's close at or after it wins over it. */
        dispatchedAt: number;
        outcome: TriageOutcome;
        classifier: string;
        reasons: string[];
        /** The reply to send for `accept` and (when the site sends decline replies) `decline`. */
        draft: ReplyDraft | null;
        /**
         * Claim the draft's first attempt in the same append. False for a mailer that sends a few at a
         * time: the sender claims it once a slot is free (see Mailer.reserve). Absent: true.
         */
        claimFirstAttempt?: boolean;
      };
    }
  | { type: 'StartReply'; data: ConversationRef & { draft: ReplyDraft } }
  | { type: 'StartSendAttempt'; data: ConversationRef & { messageId: string; attempt: number } }
  | {
      type: 'RecordSendResult';
      data: ConversationRef & {
        messageId: string;
        attempt: number;
        result: { ok: true; mailProviderMessageId: string } | { ok: false; error: string; permanent: boolean; retryAt: number | null };
      };
    }
  | { type: 'ChangeConversationStatus'; data: ConversationRef & { newStatus: ConversationStatus; resolvedBy: ResolvedBy; resolutionOutcome: string } }
  | { type: 'TakeOver'; data: ConversationRef & { by: string | null } }
  | { type: 'HandBack'; data: ConversationRef & { by: string | null } }
  | { type: 'MarkRead'; data: ConversationRef & { lastInboundMessageId: string | null; by: string | null } }
  | { type: 'MarkUnread'; data: ConversationRef & { by: string | null } };

export interface PendingReply {
  draft: ReplyDraft;
  senderType: 'agent' | 'user';
  triage: ReplyTriage;
  /** Attempts started so far. */
  attempts: number;
  /** An attempt was started and its outcome is not recorded (a crash, or it is in flight). */
  inFlight: boolean;
  /** Epoch ms of the next retry, when the last attempt failed and another is due. */
  retryAt: number | null;
}

export interface ConversationState {
  status: ConversationStatus;
  handledBy: 'agent' | 'human';
  /**
   * Dispatches already decided (triaged or skipped): a dispatch handled twice decides nothing. This
   * and `sent` and `failed` are sets (values `true`) that grow with the conversation: persistent
   * maps, since copying a `Set` per event made the fold quadratic in the conversation's length.
   */
  dispatches: ImmutableMap<true>;
  /** Outbound replies not yet sent or failed for good, by our message id (a few at a time). */
  pending: ReadonlyMap<string, PendingReply>;
  /** Replies already sent, by our message id. */
  sent: ImmutableMap<true>;
  /** Replies given up on (failed for good), by our message id: never drafted again under the same id. */
  failed: ImmutableMap<true>;
  /**
   * The last read mark: `read` with the inbound message it was read up to (a conversation the agent
   * opened with its pitch starts read). A new inbound message
   * (in the ingestion's stream, not here) makes the conversation unread in the read model; marking
   * it read again then names a newer message and records a new fact.
   */
  read: boolean;
  readUpTo: string | null;
  /** Epoch ms a person last closed the conversation (resolved or declined it); null once it is open again. */
  closedByUserAt: number | null;
}

export class ConversationRuleError extends Error {
  constructor(
    readonly code: 'CONVERSATION_TRANSITION_NOT_ALLOWED' | 'REPLY_IN_FLIGHT' | 'CONVERSATION_TAKEN_OVER' | 'CONVERSATION_NOT_TAKEN_OVER' | 'REPLY_NOT_PENDING',
    message: string,
  ) {
    super(message);
  }
}

/** The order of terminal outcomes the agent resolves with, by triage. */
const AGENT_STATUS_OF: Record<'accept' | 'decline', TerminalStatus> = { accept: 'resolved', decline: 'declined' };

export const conversationDecider: Decider<ConversationState, ConversationCommand, ConversationEvent> = {
  initialState: () => ({
    status: 'open',
    handledBy: 'agent',
    dispatches: ImmutableMap.empty(),
    pending: new Map(),
    sent: ImmutableMap.empty(),
    failed: ImmutableMap.empty(),
    read: false,
    readUpTo: null,
    closedByUserAt: null,
  }),
  evolve,
  decide(command, state) {
    const d = command.data;
    const base: Base = { siteId: d.siteId, teamId: d.teamId, occurredAt: d.now, conversationId: d.conversationId };
    switch (command.type) {
      case 'StartOutboundConversation': {
        const c = command.data;
        // A conversation already under way (a retried run) is not pitched again.
        if (state.dispatches.size > 0 || state.pending.size > 0 || state.sent.size > 0 || state.failed.size > 0) return [];
        return [
          {
            type: 'OutboundConversationStarted',
            data: {
              ...base,
              opportunityId: c.opportunityId,
              contactEmail: c.draft.to.address,
              contactName: c.contactName,
              subject: c.draft.subject,
              prospectUrl: c.prospectUrl,
              offeredUrl: c.offeredUrl,
              runId: c.runId,
            },
          },
          { type: 'ReplyDrafted', data: { ...base, ...c.draft, dispatchId: null, direction: 'outbound', senderType: 'agent', triage: 'pitch' } },
          { type: 'ReplySendAttempted', data: { ...base, messageId: c.draft.messageId, attempt: 1 } },
        ];
      }
      case 'SkipDispatch': {
        const c = command.data;
        if (state.dispatches.has(c.dispatchId)) return [];
        return [{ type: 'AgentSkipped', data: { ...base, dispatchId: c.dispatchId, inboundMessageId: c.inboundMessageId, reason: c.reason } }];
      }
      case 'RecordTriage':
        return recordTriage(command.data, state, base);
      case 'StartReply': {
        const { draft } = command.data;
        if (state.pending.has(draft.messageId) || state.sent.has(draft.messageId) || state.failed.has(draft.messageId)) return [];
        if (replyInFlight(state)) throw new ConversationRuleError('REPLY_IN_FLIGHT', 'A reply is being sent on this conversation; try again when it is recorded.');
        return [
          { type: 'ReplyDrafted', data: { ...base, ...draft, dispatchId: null, direction: 'outbound', senderType: 'user', triage: 'manual' } },
          { type: 'ReplySendAttempted', data: { ...base, messageId: draft.messageId, attempt: 1 } },
        ];
      }
      case 'StartSendAttempt': {
        const c = command.data;
        const pending = state.pending.get(c.messageId);
        if (!pending || pending.inFlight || pending.attempts >= c.attempt) return [];
        // Normally withdrawn already by the person's take-over or status change; a stream written before that rule ends it here.
        const superseded = agentNoLongerActs(state, pending);
        if (superseded) return [withdrawn(base, c.messageId, pending, superseded)];
        return [{ type: 'ReplySendAttempted', data: { ...base, messageId: c.messageId, attempt: c.attempt } }];
      }
      case 'RecordSendResult':
        return recordSendResult(command.data, state, base);
      case 'ChangeConversationStatus': {
        const c = command.data;
        if (c.newStatus === state.status) return [];
        if (replyInFlight(state)) throw new ConversationRuleError('REPLY_IN_FLIGHT', 'A reply is being sent on this conversation; its outcome sets the status.');
        if (c.resolvedBy === 'agent') {
          if (state.handledBy === 'human') throw new ConversationRuleError('CONVERSATION_TAKEN_OVER', 'A person has taken this conversation over.');
          if (state.status !== 'open' || c.newStatus === 'open') {
            throw new ConversationRuleError('CONVERSATION_TRANSITION_NOT_ALLOWED', `The agent cannot move a conversation from ${state.status} to ${c.newStatus}.`);
          }
        }
        // A person's decision withdraws the agent's replies still waiting for a retry.
        const events = c.resolvedBy === 'user' ? withdrawAgentReplies(state, base, 'a person changed the conversation status') : [];
        if (c.newStatus === 'open') {
          events.push({ type: 'ConversationReopened', data: { ...base, oldStatus: state.status as TerminalStatus, reason: 'user' } });
        } else events.push(statusChanged(base, state.status, c.newStatus, c.resolvedBy, c.resolutionOutcome));
        return events;
      }
      case 'TakeOver':
        if (state.handledBy === 'human') return [];
        return [
          ...withdrawAgentReplies(state, base, 'a person took the conversation over'),
          { type: 'ConversationTakenOver', data: { ...base, by: command.data.by } },
        ];
      case 'HandBack':
        if (state.handledBy === 'agent') return [];
        return [{ type: 'ConversationHandedBack', data: { ...base, by: command.data.by } }];
      case 'MarkRead': {
        const c = command.data;
        if (state.read && state.readUpTo === c.lastInboundMessageId) return [];
        return [{ type: 'ConversationMarkedRead', data: { ...base, upToMessageId: c.lastInboundMessageId, by: c.by } }];
      }
      case 'MarkUnread':
        if (!state.read) return [];
        return [{ type: 'ConversationMarkedUnread', data: { ...base, by: command.data.by } }];
      default:
        return assertNever(command);
    }
  },
};

function recordTriage(c: Extract<ConversationCommand, { type: 'RecordTriage' }>['data'], state: ConversationState, base: Base): ConversationEvent[] {
  if (state.dispatches.has(c.dispatchId)) return [];
  const events: ConversationEvent[] = [];
  let status = state.status;
  if (state.handledBy === 'human' || status === 'awaiting_human') {
    const reason = state.handledBy === 'human' ? 'taken_over' : 'awaiting_human';
    return [{ type: 'AgentSkipped', data: { ...base, dispatchId: c.dispatchId, inboundMessageId: c.inboundMessageId, reason } }];
  }
  if (replyInFlight(state)) throw new ConversationRuleError('REPLY_IN_FLIGHT', 'A reply is being sent on this conversation.');
  if (status !== 'open' && state.closedByUserAt !== null && c.dispatchedAt <= state.closedByUserAt) {
    // The message came before a person closed the conversation (the agent had not reached it yet):
    // the person saw it and decided; only a later message from the prospect opens it again.
    return [{ type: 'AgentSkipped', data: { ...base, dispatchId: c.dispatchId, inboundMessageId: c.inboundMessageId, reason: 'closed_by_user' } }];
  }
  if (status !== 'open') {
    // The prospect wrote again on a closed conversation: it is open again, and the agent triages the new message.
    events.push({ type: 'ConversationReopened', data: { ...base, oldStatus: status, reason: 'prospect_replied' } });
    status = 'open';
  }
  events.push({
    type: 'AgentTriaged',
    data: { ...base, dispatchId: c.dispatchId, inboundMessageId: c.inboundMessageId, outcome: c.outcome, classifier: c.classifier, reasons: c.reasons },
  });
  switch (c.outcome) {
    case 'opt_out':
      events.push(statusChanged(base, status, 'declined', 'agent', 'opted_out'));
      return events;
    case 'needs_human':
      events.push(statusChanged(base, status, 'awaiting_human', 'agent', 'needs_human'));
      return events;
    case 'accept':
    case 'decline':
      if (!c.draft) {
        // Resolved without a reply: a thank-you on the thread, a decline the site answers silently.
        events.push(statusChanged(base, status, AGENT_STATUS_OF[c.outcome], 'agent', c.outcome));
        return events;
      }
      events.push({ type: 'ReplyDrafted', data: { ...base, ...c.draft, dispatchId: c.dispatchId, direction: 'outbound', senderType: 'agent', triage: c.outcome } });
      if (c.claimFirstAttempt !== false) events.push({ type: 'ReplySendAttempted', data: { ...base, messageId: c.draft.messageId, attempt: 1 } });
      return events;
    default:
      return assertNever(c.outcome);
  }
}

function recordSendResult(
  c: Extract<ConversationCommand, { type: 'RecordSendResult' }>['data'],
  state: ConversationState,
  base: Base,
): ConversationEvent[] {
  const pending = state.pending.get(c.messageId);
  // Already recorded (a second worker, a replay): nothing new.
  if (!pending || !pending.inFlight || pending.attempts !== c.attempt) return [];
  const superseded = agentNoLongerActs(state, pending);
  if (c.result.ok) {
    // True only when this reply's outcome resolves the conversation (not once a person has taken it over).
    const autoResolved = pending.senderType === 'agent' && (pending.triage === 'accept' || pending.triage === 'decline') && !superseded;
    const events: ConversationEvent[] = [
      {
        type: 'ReplySent',
        data: {
          ...base,
          messageId: c.messageId,
          mailProviderMessageId: c.result.mailProviderMessageId,
          triage: pending.triage,
          autoResolved,
          sendOutcome: 'sent',
          senderType: pending.senderType,
          attempt: c.attempt,
        },
      },
    ];
    if (autoResolved) {
      const triage = pending.triage as 'accept' | 'decline';
      events.push(statusChanged(base, state.status, AGENT_STATUS_OF[triage], 'agent', triage));
    }
    return events;
  }
  const { error, permanent, retryAt } = c.result;
  // The attempt was under way when a person took over: it is not retried, and the person decides.
  if (superseded) {
    return [{ type: 'ReplySendFailed', data: { ...base, messageId: c.messageId, attempt: c.attempt, error: `${error}; withdrawn: ${superseded}`, permanent, retryAt: null } }];
  }
  const events: ConversationEvent[] = [
    { type: 'ReplySendFailed', data: { ...base, messageId: c.messageId, attempt: c.attempt, error, permanent, retryAt: permanent ? null : retryAt } },
  ];
  // Given up: a person decides what to do; the draft stays in the history.
  if ((permanent || retryAt === null) && state.status !== 'awaiting_human') {
    events.push(statusChanged(base, state.status, 'awaiting_human', pending.senderType === 'agent' ? 'agent' : 'user', 'send_failed'));
  }
  return events;
}

const statusChanged = (base: Base, oldStatus: ConversationStatus, newStatus: TerminalStatus, resolvedBy: ResolvedBy, resolutionOutcome: string): ConversationEvent => ({
  type: 'ConversationStatusChanged',
  data: { ...base, oldStatus, newStatus, resolvedBy, resolutionOutcome },
});

/**
 * A reply's attempt is started and its outcome not recorded, or it is drafted and waits for its first
 * attempt (a free send slot): its outcome decides the status, so nothing else may.
 */
export const replyInFlight = (state: ConversationState) => [...state.pending.values()].some((p) => p.inFlight || p.attempts === 0);

/** Why an agent's reply may no longer go out (a person took over or closed the conversation); null while the agent acts. */
export function agentNoLongerActs(state: ConversationState, pending: PendingReply): string | null {
  if (pending.senderType !== 'agent') return null;
  if (state.handledBy === 'human') return 'a person took the conversation over';
  if (state.status !== 'open') return `the conversation is ${state.status}`;
  return null;
}

/** The end of a reply that will not be sent: final, with the reason, and no status change (a person decides). */
const withdrawn = (base: Base, messageId: string, pending: PendingReply, why: string): ConversationEvent => ({
  type: 'ReplySendFailed',
  data: { ...base, messageId, attempt: pending.attempts, error: `withdrawn: ${why}`, permanent: true, retryAt: null },
});

/** The agent's replies waiting for a retry (not in flight), withdrawn. */
function withdrawAgentReplies(state: ConversationState, base: Base, why: string): ConversationEvent[] {
  const events: ConversationEvent[] = [];
  for (const [messageId, pending] of state.pending) {
    if (pending.senderType === 'agent' && !pending.inFlight) events.push(withdrawn(base, messageId, pending, why));
  }
  return events;
}

export function evolve(state: ConversationState, event: ConversationEvent): ConversationState {
  switch (event.type) {
    case 'OutboundConversationStarted':
      // The agent's own pitch opens it: nothing in it is unread (the read model says so too).
      return { ...state, read: true };
    case 'ConversationReopened':
      return { ...state, status: 'open', closedByUserAt: null };
    case 'AgentTriaged':
    case 'AgentSkipped':
      return { ...state, dispatches: state.dispatches.set(event.data.dispatchId, true) };
    case 'ReplyDrafted': {
      const { dispatchId: _d, direction: _dir, senderType, triage, siteId: _s, teamId: _t, occurredAt: _o, conversationId: _c, ...draft } = event.data;
      const pending = new Map(state.pending).set(draft.messageId, { draft, senderType, triage, attempts: 0, inFlight: false, retryAt: null });
      return { ...state, pending };
    }
    case 'ReplySendAttempted':
      return updatePending(state, event.data.messageId, (p) => ({ ...p, attempts: event.data.attempt, inFlight: true, retryAt: null }));
    case 'ReplySendFailed': {
      const { messageId, retryAt } = event.data;
      if (retryAt === null) {
        const pending = new Map(state.pending);
        pending.delete(messageId);
        return { ...state, pending, failed: state.failed.set(messageId, true) };
      }
      return updatePending(state, messageId, (p) => ({ ...p, inFlight: false, retryAt }));
    }
    case 'ReplySent': {
      const pending = new Map(state.pending);
      pending.delete(event.data.messageId);
      return { ...state, pending, sent: state.sent.set(event.data.messageId, true) };
    }
    case 'ConversationStatusChanged': {
      const { newStatus, resolvedBy, occurredAt } = event.data;
      const closedByUser = resolvedBy === 'user' && (newStatus === 'resolved' || newStatus === 'declined');
      return { ...state, status: newStatus, closedByUserAt: closedByUser ? occurredAt : null };
    }
    case 'ConversationTakenOver':
      return { ...state, handledBy: 'human' };
    case 'ConversationHandedBack':
      return { ...state, handledBy: 'agent' };
    case 'ConversationMarkedRead':
      return { ...state, read: true, readUpTo: event.data.upToMessageId };
    case 'ConversationMarkedUnread':
      return { ...state, read: false };
    default:
      return assertNever(event);
  }
}

function updatePending(state: ConversationState, messageId: string, change: (p: PendingReply) => PendingReply): ConversationState {
  const current = state.pending.get(messageId);
  if (!current) return state;
  return { ...state, pending: new Map(state.pending).set(messageId, change(current)) };
}
