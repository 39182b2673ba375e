import { agentGate, agentsDecider, agentsStream, settingsOf } from '../domain/agents.ts';
import { decideAiPause } from '../domain/aiPause.ts';
import { conversationDecider, conversationStream } from '../domain/conversation.ts';
import { ServiceError, idempotencyKeyReused, paymentRequired, rateLimited, serviceUnavailable, siteNotLicensed } from '../domain/errors.ts';
import {
  type Extraction,
  type InboundMessage,
  type IngestionResult,
  type IngestionState,
  idsNeeded,
  ingestionDecider,
  ingestionStream,
  keyedIngestionStream,
  nextUtcMidnight,
  replayable,
  sameRequest,
  threadCandidates,
  utcDay,
} from '../domain/ingestion.ts';
import { normaliseEmail } from '../domain/email.ts';
import type { Plan } from '../domain/site.ts';
import { suppressionDecider, suppressionStream } from '../domain/suppression.ts';
import { teamDecider, teamStream } from '../domain/team.ts';
import type { CounterStore } from '../ports/counterStore.ts';
import { type EventStore, EventTooLargeError, WrongExpectedRevisionError } from '../ports/eventStore.ts';
import type { Extractor } from '../ports/extractor.ts';
import type { ReadModelStore } from '../ports/readModelStore.ts';
import type { ThreadIndex } from '../ports/threadIndex.ts';
import { aggregateStream, aggregateStreamCached } from './aggregateStream.ts';
import { type CommandContext, actedBy } from './context.ts';
import { sha256Hex } from './credentials.ts';

export interface IngestMessageContext extends CommandContext {
  counters: CounterStore;
  extractor: Extractor;
  /** The one fact no stream holds: which conversation an earlier Message-Id belongs to. */
  threads: ThreadIndex;
}

/**
 * What the forwarding mailbox is started with: the ingestion's ports plus the read models it finds
 * the recipient's site in. The command itself never reads `readModels`.
 */
export interface IngestionContext extends IngestMessageContext {
  readModels: ReadModelStore;
}

/** The site facts an ingestion decides on, as the caller loaded them. */
export interface IngestionSite {
  id: string;
  teamId: string;
  domain: string;
  plan: Plan;
  licensed: boolean;
  sendingDomainVerified: boolean;
  dailyIngestionCap: number;
  dailyExtractionCap: number;
}

export interface IngestMessageInput {
  site: IngestionSite;
  /** Idempotency: the caller's scope (`<credential kind>:<credential id>`) and the header value. */
  idempotency: { scope: string; key: string } | null;
  channel: 'api' | 'smtp';
  message: InboundMessage;
  runExtraction: boolean;
}

export interface IngestMessageOutcome {
  /** 201 for a new ingestion, 200 for an idempotent replay. */
  status: 201 | 200;
  body: IngestionResult;
  /** Global position to wait for before answering (read-your-writes). */
  position: bigint | null;
}

/**
 * Fingerprint of what was asked: the site, the channel, the extraction flag and every body field.
 * Mail is keyed by its own Message-Id, which names one message (RFC 5322): a redelivery under that
 * id is the same message however it was re-encoded, so only the site counts there.
 */
export function requestHash(input: IngestMessageInput): string {
  if (input.channel === 'smtp') return sha256Hex(JSON.stringify([input.site.id, 'smtp']));
  const m = input.message;
  return sha256Hex(
    JSON.stringify([input.site.id, input.channel, input.runExtraction, m.from, m.fromName, m.subject, m.bodyText, m.bodyHtml, m.messageId, m.inReplyTo, m.references]),
  );
}

/** In-process single flight per keyed stream: concurrent repeats wait for the first instead of racing it. */
const inFlight = new WeakMap<EventStore, Map<string, Promise<unknown>>>();

/**
 * IngestMessage: idempotent replay, billing gate, daily ingestion cap, threading, extraction (within
 * the daily extraction cap), aiPause, then one atomic append of every fact of the ingestion.
 */
export async function ingestMessage(ctx: IngestMessageContext, input: IngestMessageInput): Promise<IngestMessageOutcome> {
  // Licence and billing first: a replay is an answer too, and an unlicensed site gets none.
  await billingGate(ctx, input);
  if (!input.idempotency) {
    const ingestionId = ctx.newId();
    return run(ctx, input, ingestionStream(ingestionId), ingestionId, { last: null }, 'no_stream');
  }

  const streamId = keyedIngestionStream(sha256Hex(`${input.idempotency.scope}:${input.idempotency.key}`));
  let flights = inFlight.get(ctx.events);
  if (!flights) inFlight.set(ctx.events, (flights = new Map()));
  for (let attempt = 0; attempt < 20; attempt++) {
    const pending = flights.get(streamId);
    if (pending) await pending.catch(() => {});
    const { state, expectedRevision, lastPosition } = await aggregateStream(ctx.events, streamId, ingestionDecider);
    const now = ctx.clock.now().getTime();
    const stored = replayable(state, now);
    if (stored) {
      if (!sameRequest(state, input.site.id, requestHash(input))) throw idempotencyKeyReused();
      return { status: 200, body: stored, position: lastPosition };
    }
    if (flights.has(streamId)) continue; // another request started meanwhile: wait for it
    const flight = run(ctx, input, streamId, ctx.newId(), state, expectedRevision);
    flights.set(streamId, flight);
    try {
      return await flight;
    } catch (error) {
      // Another instance recorded this key first: read its result and replay it.
      if (error instanceof WrongExpectedRevisionError) continue;
      throw error;
    } finally {
      if (flights.get(streamId) === flight) flights.delete(streamId);
    }
  }
  throw serviceUnavailable('The Idempotency-Key is contended; retry.', 1);
}

/**
 * PAYMENT_REQUIRED (402) when extraction is asked for and the team (as its stream says) or the site
 * is not in good standing; SITE_NOT_LICENSED (403) for an unlicensed site otherwise.
 */
async function billingGate(ctx: IngestMessageContext, input: IngestMessageInput): Promise<void> {
  const { site } = input;
  if (input.runExtraction) {
    const { state: team } = await aggregateStreamCached(ctx.events, teamStream(site.teamId), teamDecider);
    if (team.status !== 'exists' || team.billingStatus !== 'healthy') throw paymentRequired("The team's subscription is not in good standing.");
    if (!site.licensed) throw paymentRequired('The site has no active licence.');
  } else if (!site.licensed) {
    throw siteNotLicensed();
  }
}

async function run(
  ctx: IngestMessageContext,
  input: IngestMessageInput,
  streamId: string,
  ingestionId: string,
  state: IngestionState,
  expected: 'no_stream' | bigint,
): Promise<IngestMessageOutcome> {
  const { site, message } = input;
  const nowMs = ctx.clock.now().getTime();
  const day = utcDay(nowMs);
  const midnight = nextUtcMidnight(nowMs);
  const expiresAt = new Date(midnight + 60 * 60 * 1000);
  const taken: string[] = [];
  const giveBack = async () => {
    for (const key of taken.splice(0)) await ctx.counters.increment(key, -1, expiresAt).catch(() => {});
  };

  try {
    const ingestKey = `ingestions:${site.id}:${day}`;
    const ingested = await ctx.counters.increment(ingestKey, 1, expiresAt);
    taken.push(ingestKey);
    if (ingested > site.dailyIngestionCap) {
      throw rateLimited((midnight - nowMs) / 1000, `The site's daily ingestion cap of ${site.dailyIngestionCap} is reached; it resets at 00:00 UTC.`);
    }

    const thread = await ctx.threads.find(site.id, threadCandidates(message.inReplyTo, message.references));
    let extraction: Extraction = { ran: false };
    if (input.runExtraction && !thread) {
      const extractKey = `extractions:${site.id}:${day}`;
      const extracted = await ctx.counters.increment(extractKey, 1, expiresAt);
      taken.push(extractKey);
      if (extracted > site.dailyExtractionCap) {
        await ctx.counters.increment(extractKey, -1, expiresAt);
        taken.pop();
      } else {
        const outcome = await ctx.extractor.extract({ subject: message.subject, bodyText: message.bodyText, from: message.from, siteDomain: site.domain });
        extraction = { ran: true, extractor: outcome.extractor, asks: outcome.asks };
      }
    }

    const { state: agents } = await aggregateStreamCached(ctx.events, agentsStream(site.id), agentsDecider);
    const outreach = settingsOf(agents, 'outreach');
    const { state: suppressions } = await aggregateStreamCached(ctx.events, suppressionStream(site.teamId), suppressionDecider);
    // A reply on a thread joins a conversation a person may be handling: the agent will not act on it.
    const conversation = thread ? (await aggregateStreamCached(ctx.events, conversationStream(thread.conversationId), conversationDecider)).state : null;
    const pause = decideAiPause({
      senderEmail: message.from,
      suppressed: suppressions.has(normaliseEmail(message.from)),
      agentGate: agentGate(site, outreach, 'outreach', 'reply'),
      sendingDomainVerified: site.sendingDomainVerified,
      conversation,
    });

    const ids = Array.from({ length: idsNeeded(extraction) }, () => ctx.newId());
    // Stamped now, after the extraction (an LLM call may take seconds), just before the append: lists are newest
    // first by this time, so an ingestion stored after a faster, later one still lands at the top, not behind a
    // client's cursor.
    const decidedAt = ctx.clock.now().getTime();
    const events = ingestionDecider.decide(
      {
        type: 'IngestMessage',
        data: { ingestionId, siteId: site.id, teamId: site.teamId, channel: input.channel, message, extraction, thread, pause, ids, now: decidedAt, requestHash: input.idempotency ? requestHash(input) : null },
      },
      state,
    );
    const recorded = events.find((e) => e.type === 'IngestionRecorded')!;
    let result;
    try {
      result = await ctx.events.append(streamId, events.map((e) => ({ type: e.type, data: e.data, metadata: { ingestionId, ...actedBy(ctx) } })), expected);
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError || error instanceof EventTooLargeError) throw error;
      throw Object.assign(
        serviceUnavailable('The ingestion and its agent dispatch could not be recorded; nothing was stored. Retry with the same Idempotency-Key.', 1),
        { cause: error },
      );
    }
    taken.length = 0; // durable: the caps stay consumed
    return { status: 201, body: recorded.data.response, position: result.position };
  } catch (error) {
    await giveBack();
    if (error instanceof ServiceError || error instanceof WrongExpectedRevisionError || error instanceof EventTooLargeError) throw error;
    throw Object.assign(serviceUnavailable('The ingestion could not be completed; nothing was stored. Retry with the same Idempotency-Key.', 1), {
      cause: error,
    });
  }
}
