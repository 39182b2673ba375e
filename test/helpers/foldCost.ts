import type { Decider } from '../../src/domain/decider.ts';

/**
 * Milliseconds (best of `rounds`) to fold `count` events of `events` from `from` on, onto the fold
 * of those before: compared early and late in a long history, it shows whether a decider's fold is
 * linear (about the same) or quadratic (growing with what came before).
 */
export function foldCost<State, Event>(decider: Decider<State, unknown, Event>, events: readonly Event[], from: number, count: number, rounds = 5): number {
  const before = events.slice(0, from).reduce(decider.evolve, decider.initialState());
  const next = events.slice(from, from + count);
  let best = Infinity;
  for (let round = 0; round < rounds; round += 1) {
    const started = performance.now();
    next.reduce(decider.evolve, before);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}
