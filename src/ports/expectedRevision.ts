import { type ExpectedRevision, WrongExpectedRevisionError } from './eventStore.ts';

/** Shared rule for every adapter: throws the typed conflict when `current` does not satisfy `expected`. */
export function checkExpectedRevision(streamId: string, expected: ExpectedRevision, current: bigint | 'no_stream'): void {
  const ok =
    expected === 'any' ||
    (expected === 'no_stream' && current === 'no_stream') ||
    (expected === 'stream_exists' && current !== 'no_stream') ||
    (typeof expected === 'bigint' && current === expected);
  if (!ok) throw new WrongExpectedRevisionError(streamId, expected, current);
}
