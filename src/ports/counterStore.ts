/**
 * Shared counters for limits that must hold across every instance of the service: the write rate
 * tier and the daily ingestion/extraction caps. Each counter lives in one window (the key names it)
 * and may be forgotten after `expiresAt`.
 */
export interface CounterStore {
  /** Adds `by` (may be negative) to the counter and returns its new value, atomically. */
  increment(key: string, by: number, expiresAt: Date): Promise<number>;
  /**
   * Every counter whose key sorts from `from` to `to` (both included; ASCII keys, byte order), in key
   * order, as they stand after every increment that resolved before it was asked. For windows named
   * by a fixed-width number after a common prefix (the write tier's seconds).
   */
  range(from: string, to: string): Promise<Array<{ key: string; count: number }>>;
  close(): Promise<void>;
}

/** The key of window `n` (a second, say) under `prefix`: fixed width, so one `range` holds a prefix's windows in order. */
export const windowKey = (prefix: string, n: number): string => `${prefix}:${String(n).padStart(12, '0')}`;

/** The window a `windowKey` names. */
export const windowOf = (key: string): number => Number(key.slice(key.lastIndexOf(':') + 1));
