/** Emmett-style decider: plain functions over plain data; no I/O, no clock, no randomness. */
export interface Decider<State, Command, Event> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
}

/** Ends a switch over a closed union: the compiler proves every case is handled. */
export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
