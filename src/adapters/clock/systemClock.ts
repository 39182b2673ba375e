import type { Clock } from '../../ports/clock.ts';

/** The wall clock; tests pass their own Clock instead. */
export const systemClock: Clock = { now: () => new Date() };
