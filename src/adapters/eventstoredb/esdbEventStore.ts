import {
  ANY,
  BACKWARDS,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  MaxAppendSizeExceededError,
  NO_STREAM,
  NotLeaderError,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
  convertToCommandError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamRecordedEvent,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type JSONType,
  type Position,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
} from '../../ports/eventStore.ts';
import { EventTooLargeError, WrongExpectedRevisionError } from '../../ports/eventStore.ts';
import { timeBound } from '../../lib/timeBound.ts';
import { catchUpSubscription } from '../shared/catchUpSubscription.ts';
import { treatAsUnavailable } from '../../ports/storeUnavailable.ts';

/**
 * A raw gRPC error, as appends reject with (status 14 and the like). The client's own conversion takes
 * any error with a numeric `code` for one: a MongoDB error (code 14 is its TypeMismatch) read as
 * unavailable, and one whose code it does not know threw reading `details`.
 */
const isGrpcError = (error: Error): boolean => {
  const e = error as Error & { code?: unknown; details?: unknown; metadata?: { getMap?: unknown } };
  return typeof e.code === 'number' && typeof e.details === 'string' && typeof e.metadata?.getMap === 'function';
};

/** The server unreachable, too slow to answer, or no longer the leader (the client reconnects to the new one). */
export const isEsdbUnavailable = (error: unknown): boolean => {
  // Reads reject with the client's own errors.
  const e = error instanceof Error && isGrpcError(error) ? convertToCommandError(error) : error;
  return e instanceof UnavailableError || e instanceof DeadlineExceededError || e instanceof NotLeaderError;
};
treatAsUnavailable(isEsdbUnavailable);

const PING_TIMEOUT_MS = 5_000;
const HEAD_PAGE = 100;

/**
 * EventStoreDB adapter. Our global `position` is the event's commit position in `$all` (a bigint,
 * never converted to a number). System streams and events (`$`-prefixed) are invisible through this port.
 */
export class EsdbEventStore implements EventStore {
  readonly client: EventStoreDBClient;

  constructor(connectionStringOrClient: string | EventStoreDBClient) {
    this.client =
      typeof connectionStringOrClient === 'string'
        ? EventStoreDBClient.connectionString(connectionStringOrClient)
        : connectionStringOrClient;
  }

  async append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    try {
      const result = await this.client.appendToStream(
        streamId,
        events.map((event) =>
          jsonEvent({
            type: event.type,
            data: event.data as JSONType,
            ...(event.metadata !== undefined ? { metadata: event.metadata } : {}),
          }),
        ),
        { expectedRevision: toEsdbExpected(expectedRevision) },
      );
      // Only with throwOnAppendFailure=false (the configuration refuses it): a conflict resolves instead of throwing.
      if (!result.success) throw new WrongExpectedRevisionError(streamId, expectedRevision, result.nextExpectedRevision >= 0n ? result.nextExpectedRevision : 'no_stream');
      return { nextExpectedRevision: result.nextExpectedRevision, position: result.position?.commit ?? -1n };
    } catch (error) {
      if (error instanceof MaxAppendSizeExceededError) throw new EventTooLargeError(streamId, error.maxAppendSize ?? null);
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion;
        throw new WrongExpectedRevisionError(
          streamId,
          expectedRevision,
          typeof actual === 'bigint' && actual >= 0n ? actual : 'no_stream',
        );
      }
      throw error;
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    try {
      const from = options.fromRevision === undefined ? {} : { fromRevision: options.fromRevision };
      for await (const resolved of this.client.readStream(streamId, from)) {
        const event = resolved.event;
        if (!event) continue;
        out.push(toRecorded(event, event.position?.commit ?? resolved.commitPosition ?? -1n));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return out;
  }

  /**
   * `$all` is read from the leader (`requiresLeader`, for `headPosition` too), whatever the connection
   * string's `nodePreference`: a follower takes a page shorter than its limit as reaching the head read
   * before it (`readPageOfTypes`), which holds only when both are answered by nodes equally up to
   * date. A reconnect between the two calls to a follower behind the first would skip events. A
   * non-leader answers NotLeaderError: the client reconnects to the leader and the caller tries again.
   *
   * Pages `$all` forwards. ESDB's `fromPosition` is inclusive and pages may hold system events we
   * drop, so each page re-reads from the last event it saw and skips everything at or below it.
   * A page is always read to its end (never `break` out of the stream: that would leave the gRPC call open).
   */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const after = options.after ?? -1n;
    const limit = options.limit ?? 1000;
    const types = options.types ? new Set(options.types) : null;
    const out: RecordedEvent[] = [];
    if (limit <= 0 || types?.size === 0) return out;
    const pageSize = Math.min(Math.max(limit + 1, 64), 4096);
    let floor = after;
    let from: ReadPosition = after < 0n ? START : { commit: after, prepare: after };
    while (out.length < limit) {
      let count = 0;
      let last: Position | undefined;
      for await (const resolved of this.client.readAll({ fromPosition: from, maxCount: pageSize, requiresLeader: true })) {
        count += 1;
        const event = resolved.event;
        if (!event) continue;
        last = event.position;
        if (event.position.commit <= floor || isSystem(event) || (types && !types.has(event.type))) continue;
        out.push(toRecorded(event, event.position.commit));
      }
      if (count < pageSize || !last) break;
      floor = last.commit;
      from = last;
    }
    return out.length > limit ? out.slice(0, limit) : out;
  }

  subscribeToAll(options: SubscribeOptions = {}): AsyncIterable<RecordedEvent> {
    return catchUpSubscription(this, options);
  }

  /**
   * A short-lived server-filtered subscription from `after`: resolves on its first non-system event
   * past `after`, on timeout or on abort, and always cancels the gRPC call. The `data` listener only
   * wakes us up (no async work in it); the events themselves are read by `readAll`.
   */
  async waitForNew(after: bigint, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return;
    const subscription = this.client.subscribeToAll({
      fromPosition: after < 0n ? START : { commit: after, prepare: after },
      filter: excludeSystemEvents(),
    });
    // Late errors (after we stopped listening) must not become uncaught exceptions.
    subscription.on('error', () => {});
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    let onData: ((resolved: AllStreamResolvedEvent) => void) | undefined;
    let onError: ((error: Error) => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        timer = setTimeout(resolve, timeoutMs);
        onAbort = () => resolve();
        onData = (resolved) => {
          const event = resolved.event;
          if (event && event.position.commit > after && !isSystem(event)) resolve();
        };
        onError = reject;
        signal?.addEventListener('abort', onAbort, { once: true });
        subscription.on('data', onData);
        subscription.on('error', onError);
      });
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      if (onData) subscription.off('data', onData);
      if (onError) subscription.off('error', onError);
      await subscription.unsubscribe().catch(() => {});
      subscription.destroy();
    }
  }

  async headPosition(): Promise<bigint> {
    let from: ReadPosition = END;
    let ceiling: bigint | undefined;
    for (;;) {
      let count = 0;
      let last: Position | undefined;
      let found: bigint | undefined;
      for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: HEAD_PAGE, requiresLeader: true })) {
        count += 1;
        const event = resolved.event;
        if (!event) continue;
        last = event.position;
        if (ceiling !== undefined && event.position.commit >= ceiling) continue;
        if (found === undefined && !isSystem(event)) found = event.position.commit;
      }
      if (found !== undefined) return found;
      if (count < HEAD_PAGE || !last) return -1n;
      ceiling = last.commit;
      from = last;
    }
  }

  /**
   * Reads one event of `$all` backwards from the leader; fails when the server is unreachable or
   * slower than 5 s. A node that is not the leader names it and the client reconnects there, so a
   * connection string preferring a follower is on the leader once this has answered (the `$all`
   * reads need it; see `readAll`).
   */
  async ping(): Promise<void> {
    try {
      await this.pingOnce();
    } catch (error) {
      const e = error instanceof Error && isGrpcError(error) ? convertToCommandError(error) : error;
      if (!(e instanceof NotLeaderError)) throw error;
      await this.pingOnce();
    }
  }

  private async pingOnce(): Promise<void> {
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, requiresLeader: true });
    try {
      const consumed = (async () => {
        for await (const _ of read);
      })();
      await timeBound(consumed, PING_TIMEOUT_MS, `EventStoreDB did not answer within ${PING_TIMEOUT_MS} ms`);
    } finally {
      if (!read.readableEnded) {
        read.on('error', () => {});
        await read.cancel().catch(() => {});
        read.destroy();
      }
    }
  }

  /**
   * Soft delete: the stream reads as missing at once and its events leave `$all` at the next
   * scavenge. A later append with 'no_stream' succeeds; its revisions continue after the deleted ones.
   */
  async deleteStream(streamId: string): Promise<void> {
    try {
      await this.client.deleteStream(streamId, { expectedRevision: ANY });
    } catch (error) {
      if (error instanceof StreamNotFoundError) return;
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}

function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    case 'any':
      return ANY;
    default:
      return expected;
  }
}

function isSystem(event: AllStreamRecordedEvent | EsdbRecordedEvent): boolean {
  return event.type.startsWith('$') || event.streamId.startsWith('$');
}

function toRecorded(event: AllStreamRecordedEvent | EsdbRecordedEvent, position: bigint): RecordedEvent {
  const metadata = event.metadata;
  return {
    id: event.id,
    streamId: event.streamId,
    revision: event.revision,
    position,
    type: event.type,
    data: event.data,
    metadata: metadata && typeof metadata === 'object' && !(metadata instanceof Uint8Array) && !Array.isArray(metadata)
      ? (metadata as Record<string, unknown>)
      : {},
    createdAt: event.created,
  };
}
