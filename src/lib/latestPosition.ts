/**
 * The latest of several global positions (null and undefined skipped; null when none): what the read
 * models must include to show all of several commands' outcomes. A command that appended nothing
 * reports the position it was decided on, which may be older than another's append.
 */
export const latestPosition = (...positions: (bigint | null | undefined)[]): bigint | null =>
  positions.reduce<bigint | null>((a, b) => (b != null && (a === null || b > a) ? b : a), null);
