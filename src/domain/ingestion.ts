import type { AiPause, SkipReason } from './aiPause.ts';
import { type Decider, assertNever } from './decider.ts';
import type { EntrySource, OutreachEventBase } from './outreachEvents.ts';

/** How long a stored result answers a repeated Idempotency-Key. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_KEY_SHAPE = /^[A-Za-z0-9._:-]{1,128}$/;

/** One ingestion is one append to one stream: keyed ingestions share a stream per (caller, key). */
export const keyedIngestionStream = (keyHash: string) => `ingestion_key-${keyHash}`;
export const ingestionStream = (ingestionId: string) => `ingestion-${ingestionId}`;

/** What the extractor pulled out of a pitch: one ask per link the sender wants placed. */
export interface Ask {
  targetUrl: string;
  anchorText: string | null;
  suggestedSentence: string | null;
  sourceUrl: string | null;
}

/** The spec's ingestion result (response body of 201 and of the 200 replay). */
export interface IngestionResult {
  ok: true;
  siteId: string;
  conversationIds: string[];
  opportunityIds: string[];
  entrySource: EntrySource;
  aiPaused: boolean;
  skipReason?: SkipReason;
}

export interface InboundMessage {
  from: string;
  fromName: string | null;
  subject: string;
  bodyText: string;
  bodyHtml: string | null;
  /** RFC 5322 Message-Id of the original email. */
  messageId: string | null;
  inReplyTo: string | null;
  references: string | null;
  /**
   * The prospect was read from a forwarded block (a team member forwarded the pitch): the ids above
   * are the forward's, which the prospect never saw; they thread later forwards but never a reply.
   */
  forwarded?: boolean;
}

export type Extraction = { ran: false } | { ran: true; extractor: string; asks: Ask[] };

export interface ThreadTarget {
  conversationId: string;
  opportunityId: string;
  entrySource: EntrySource;
}

export type IngestionCommand = {
  type: 'IngestMessage';
  data: {
    ingestionId: string;
    siteId: string;
    teamId: string;
    channel: 'api' | 'smtp';
    message: InboundMessage;
    extraction: Extraction;
    /** The conversation the message replies to, when threading found one. */
    thread: ThreadTarget | null;
    pause: AiPause;
    /** Fresh ids for the message, conversations, opportunities and dispatches; enough for every ask. */
    ids: string[];
    /** Epoch milliseconds. */
    now: number;
    /** Fingerprint of the request (site, channel, body): a key's replay must match it. Null without a key (nothing can replay it). */
    requestHash: string | null;
  };
};

type Base = OutreachEventBase;
export type IngestionEvent =
  | {
      type: 'ConversationOpened';
      data: Base & {
        conversationId: string;
        opportunityId: string;
        entrySource: EntrySource;
        status: 'open';
        contactEmail: string;
        contactName: string | null;
        subject: string;
        ask: Ask | null;
        aiPaused: boolean;
        skipReason: SkipReason | null;
      };
    }
  | { type: 'OpportunityCreated'; data: Base & { opportunityId: string; conversationId: string; entrySource: EntrySource } }
  | {
      type: 'MessageIngested';
      data: Base & {
        ingestionId: string;
        messageId: string;
        conversationIds: string[];
        opportunityIds: string[];
        entrySource: EntrySource;
        direction: 'inbound';
        senderType: 'recipient';
        channel: 'api' | 'smtp';
        threaded: boolean;
        extractor: string | null;
        aiPaused: boolean;
        skipReason: SkipReason | null;
        /** The email's own Message-Id (RFC 5322), kept apart from our message id. */
        externalMessageId: string | null;
      } & Omit<InboundMessage, 'messageId'>;
    }
  | { type: 'MessageReceived'; data: Base & { conversationId: string; opportunityId: string; messageId: string; entrySource: EntrySource } }
  | {
      type: 'AgentDispatchRequested';
      data: Base & { dispatchId: string; conversationId: string; messageId: string; task: 'triage_and_reply' };
    }
  | { type: 'IngestionRecorded'; data: Base & { ingestionId: string; status: 201; response: IngestionResult; requestHash?: string } };

/** A keyed ingestion stream remembers its latest result, to replay it within the retention window. */
export type IngestionState = { last: { response: IngestionResult; recordedAt: number; siteId: string; requestHash: string | null } | null };

/** The stored result a repeat of the key gets, within the retention window. */
export function replayable(state: IngestionState, now: number): IngestionResult | null {
  if (!state.last) return null;
  return now - state.last.recordedAt < IDEMPOTENCY_RETENTION_MS ? state.last.response : null;
}

/**
 * A replay must be the same request: the same site and the same body (as Stripe does). Results
 * recorded before fingerprints existed are matched on the site alone.
 */
export function sameRequest(state: IngestionState, siteId: string, requestHash: string): boolean {
  if (!state.last) return true;
  return state.last.siteId === siteId && (state.last.requestHash === null || state.last.requestHash === requestHash);
}

export function entrySourceOf(extraction: Extraction): EntrySource {
  if (!extraction.ran) return 'direct_inbound_external';
  return extraction.asks.length > 0 ? 'forwarded_actionable' : 'forwarded_unactionable';
}

export class IngestionRuleError extends Error {}

export const ingestionDecider: Decider<IngestionState, IngestionCommand, IngestionEvent> = {
  initialState: () => ({ last: null }),
  evolve(state, event) {
    if (event.type === 'IngestionRecorded') {
      const d = event.data;
      return { last: { response: d.response, recordedAt: d.occurredAt, siteId: d.siteId, requestHash: d.requestHash ?? null } };
    }
    return state;
  },
  decide(command, state) {
    switch (command.type) {
      case 'IngestMessage':
        if (replayable(state, command.data.now)) throw new IngestionRuleError('this Idempotency-Key already has a result');
        return ingest(command.data);
      default:
        return assertNever(command.type);
    }
  },
};

// Events are built field by field: on Node 20, an object literal that spreads another and adds
// fields (`{ ...base, x }`) costs about 1.5 µs each (V8 takes a slow path), ten times the literal.
function ingest(c: IngestionCommand['data']): IngestionEvent[] {
  const { siteId, teamId, now: occurredAt } = c;
  const ids = [...c.ids];
  const take = () => {
    const id = ids.shift();
    if (!id) throw new IngestionRuleError('not enough ids for this ingestion');
    return id;
  };
  const messageId = take();
  const skipReason = c.pause.aiPaused ? c.pause.skipReason : null;
  const events: IngestionEvent[] = [];

  let entrySource: EntrySource;
  let pairs: Array<{ conversationId: string; opportunityId: string }>;
  if (c.thread) {
    entrySource = c.thread.entrySource;
    pairs = [{ conversationId: c.thread.conversationId, opportunityId: c.thread.opportunityId }];
  } else {
    entrySource = entrySourceOf(c.extraction);
    const asks: Array<Ask | null> = c.extraction.ran && c.extraction.asks.length > 0 ? c.extraction.asks : [null];
    pairs = [];
    for (const ask of asks) {
      const pair = { conversationId: take(), opportunityId: take() };
      pairs.push(pair);
      events.push({
        type: 'ConversationOpened',
        data: {
          siteId,
          teamId,
          occurredAt,
          conversationId: pair.conversationId,
          opportunityId: pair.opportunityId,
          entrySource,
          status: 'open',
          contactEmail: c.message.from,
          contactName: c.message.fromName,
          subject: c.message.subject,
          ask,
          aiPaused: c.pause.aiPaused,
          skipReason,
        },
      });
      events.push({ type: 'OpportunityCreated', data: { siteId, teamId, occurredAt, opportunityId: pair.opportunityId, conversationId: pair.conversationId, entrySource } });
    }
  }

  events.push({
    type: 'MessageIngested',
    data: {
      siteId,
      teamId,
      occurredAt,
      from: c.message.from,
      fromName: c.message.fromName,
      subject: c.message.subject,
      bodyText: c.message.bodyText,
      bodyHtml: c.message.bodyHtml,
      inReplyTo: c.message.inReplyTo,
      references: c.message.references,
      externalMessageId: c.message.messageId === null ? null : normaliseMessageId(c.message.messageId),
      ...(c.message.forwarded ? { forwarded: true } : {}),
      ingestionId: c.ingestionId,
      messageId,
      conversationIds: pairs.map((p) => p.conversationId),
      opportunityIds: pairs.map((p) => p.opportunityId),
      entrySource,
      direction: 'inbound',
      senderType: 'recipient',
      channel: c.channel,
      threaded: c.thread !== null,
      extractor: c.extraction.ran ? c.extraction.extractor : null,
      aiPaused: c.pause.aiPaused,
      skipReason,
    },
  });
  for (const pair of pairs) {
    events.push({ type: 'MessageReceived', data: { siteId, teamId, occurredAt, conversationId: pair.conversationId, opportunityId: pair.opportunityId, messageId, entrySource } });
  }
  if (!c.pause.aiPaused) {
    for (const pair of pairs) {
      events.push({
        type: 'AgentDispatchRequested',
        data: { siteId, teamId, occurredAt, dispatchId: take(), conversationId: pair.conversationId, messageId, task: 'triage_and_reply' },
      });
    }
  }
  const response: IngestionResult = {
    ok: true,
    siteId,
    conversationIds: pairs.map((p) => p.conversationId),
    opportunityIds: pairs.map((p) => p.opportunityId),
    entrySource,
    aiPaused: c.pause.aiPaused,
  };
  if (skipReason) response.skipReason = skipReason;
  const recorded: Extract<IngestionEvent, { type: 'IngestionRecorded' }>['data'] = { siteId, teamId, occurredAt, ingestionId: c.ingestionId, status: 201, response };
  if (c.requestHash !== null) recorded.requestHash = c.requestHash;
  events.push({ type: 'IngestionRecorded', data: recorded });
  return events;
}

/** Ids one ingestion may need: the message, a conversation + opportunity + dispatch per ask (at least one). */
export const idsNeeded = (extraction: Extraction) => 1 + 3 * Math.max(1, extraction.ran ? extraction.asks.length : 0);

/**
 * How many Message-Ids threading looks up at most. Each is one read-model lookup; a References
 * chain of thousands of short ids (32 000 characters are allowed) would otherwise cost thousands of
 * round trips per request. The newest ids are the ones that name a known message.
 */
export const MAX_THREAD_CANDIDATES = 100;

/** Message-Ids named by In-Reply-To and References, most specific first (In-Reply-To, then References newest to oldest). */
export function threadCandidates(inReplyTo: string | null, references: string | null): string[] {
  const ids = [...parseMessageIds(inReplyTo), ...parseMessageIds(references).reverse()];
  return [...new Set(ids)].slice(0, MAX_THREAD_CANDIDATES);
}

/** `<a@b> <c@d>` or bare ids separated by whitespace/commas; angle brackets are dropped. */
export function parseMessageIds(header: string | null): string[] {
  if (!header) return [];
  const bracketed = [...header.matchAll(/<([^<>\s]+)>/g)].map((m) => m[1]!);
  if (bracketed.length > 0) return bracketed;
  return header.split(/[\s,]+/).filter(Boolean);
}

/**
 * An RFC 5322 msg-id (`<id-left@id-right>`), with or without its angle brackets: no white space,
 * no control characters, one `@`; UTF-8 allowed (RFC 6532), but no lone UTF-16 surrogate (it cannot
 * be stored as text: the thread index would no longer find it after a restart). A reply threads onto
 * it when it is also a `MAIL_MESSAGE_ID_SHAPE`.
 */
export const MESSAGE_ID_SHAPE = /^(?:<[^<>\s@\p{Cc}\p{Cs}]+@[^<>\s@\p{Cc}\p{Cs}]+>|[^<>\s@\p{Cc}\p{Cs}]+@[^<>\s@\p{Cc}\p{Cs}]+)$/u;

/**
 * A msg-id a mail header carries as it is: printable ASCII (no SMTPUTF8 is asked for). A reply's
 * In-Reply-To and References leave other ids out, and the mailer refuses them.
 */
export const MAIL_MESSAGE_ID_SHAPE = /^(?:<[!-;=?A-~]+@[!-;=?A-~]+>|[!-;=?A-~]+@[!-;=?A-~]+)$/;

/** Message-Ids are compared without angle brackets, case-sensitively (RFC 5322 ids are case-sensitive). */
export const normaliseMessageId = (id: string) => id.trim().replace(/^<|>$/g, '');

export const DAY_MS = 24 * 60 * 60 * 1000;
/** `YYYY-MM-DD` of the UTC day. */
export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
export const nextUtcMidnight = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS + DAY_MS;
