/**
 * Shared counters for limits that must hold across every instance of the service: the write rate
 * tier and the daily ingestion/extraction caps. Each counter lives in one window (the key names it)
 * and may be forgotten after `expiresAt`.
 */
export interface CounterStore {
  /** Adds `by` (may be negative) to the counter and returns its new value, atomically. */
  increment(key: string, by: number, expiresAt: Date): Promise<number>;
  close(): Promise<void>;
}
