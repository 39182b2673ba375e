/** The event store port. Commands and projections see only this; adapters implement it. */

/** What the appender expects the stream to look like before its events are written. */
export type ExpectedRevision =
  | 'no_stream' // the stream must not exist yet
  | 'stream_exists' // the stream must already exist
  | 'any' // no check
  | bigint; // the revision of the stream's last event (0n after one event)

export interface NewEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
  metadata?: Record<string, unknown>;
}

export interface RecordedEvent<T extends string = string, D = unknown> {
  /** Unique id of the event (UUID). */
  id: string;
  streamId: string;
  /** Zero-based position of the event within its stream. */
  revision: bigint;
  /** Position in the global log: strictly increasing, not necessarily contiguous. */
  position: bigint;
  type: T;
  data: D;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

export interface AppendResult {
  /** Revision of the last event written. */
  nextExpectedRevision: bigint;
  /** Global position of the last event written. */
  position: bigint;
}

export interface ReadStreamOptions {
  /** The revision of the first event to read. */
  fromRevision?: bigint;
}

export interface ReadAllOptions {
  /** Read events whose position is strictly greater than this. Omit for the start. */
  after?: bigint;
  /** At most this many events. */
  limit?: number;
  /**
   * Only events of these types (a rebuild of some projections reads only what they handle). The
   * others are passed over, not counted against `limit`: a page shorter than `limit` still means
   * the end of the log as it was read.
   */
  types?: readonly string[];
}

export interface SubscribeOptions {
  /** Resume after this position (the stored checkpoint). Omit to start at the beginning. */
  after?: bigint;
  /** Stops the subscription. */
  signal?: AbortSignal;
  /** Called when the underlying subscription fails and is about to resubscribe. */
  onError?: (error: unknown) => void;
}

export class WrongExpectedRevisionError extends Error {
  override readonly name = 'WrongExpectedRevisionError';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${String(actual)}`);
  }
}

/** The store refuses an append this large (EventStoreDB: over its `MaxAppendSize`); retrying cannot help. */
export class EventTooLargeError extends Error {
  override readonly name = 'EventTooLargeError';
  constructor(
    readonly streamId: string,
    readonly maxBytes: number | null,
  ) {
    super(`stream ${streamId}: the append is larger than the event store accepts${maxBytes === null ? '' : ` (${maxBytes} bytes)`}`);
  }
}

export interface EventStore {
  append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult>;
  /**
   * Every event of one stream in order, or those from revision `fromRevision` on (inclusive); an
   * empty list when the stream does not exist (or has nothing from there).
   */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** A page of the global log in position order. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * A catch-up subscription to the global log: first the history after `after`, then live events.
   * It resubscribes from the last event it yielded after any error of the underlying store.
   */
  subscribeToAll(options?: SubscribeOptions): AsyncIterable<RecordedEvent>;
  /** Resolves when events after `after` may exist, or after `timeoutMs`, whichever comes first. */
  waitForNew(after: bigint, timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /** Position of the last event in the log, or -1n when it is empty. */
  headPosition(): Promise<bigint>;
  /**
   * Removes a stream and all its events (for data that must be erased, such as a deleted webhook
   * subscription's delivery history). A later append sees the stream as never written. Optional:
   * callers skip the erasure where an adapter lacks it.
   */
  deleteStream?(streamId: string): Promise<void>;
  /**
   * Global position of the stream's last event, null when it has none: a cheap check that a stream
   * read earlier is unchanged (positions are never reused). Optional: callers read the stream instead.
   */
  streamLastPosition?(streamId: string): Promise<bigint | null>;
  /**
   * Position of the last event whose type belongs to the named mark (a set of types given when the
   * store was opened), -1n when there is none, or null when the store keeps no such mark. Every
   * append that resolved before the call is counted, whichever process made it. Optional: callers use
   * `headPosition` instead, which is never before the mark.
   */
  markPosition?(mark: string): Promise<bigint | null>;
  /**
   * The same store for a background role (webhook delivery, agents): its appends never commit on the
   * calling thread, so their durable commits do not block the event loop it shares with the API.
   * Optional: where absent (or where appends are network calls anyway) the store itself is used.
   */
  offThreadAppends?(): EventStore;
  /** Cheap reachability probe for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
