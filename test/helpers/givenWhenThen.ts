import assert from 'node:assert/strict';
import type { Decider } from '../../src/domain/decider.ts';

/**
 * Given / when / then for deciders (Emmett style):
 *
 *   given(teamDecider, [TeamCreated]).when(SetTeamBillingStatus).then([TeamBillingStatusChanged]);
 *   given(teamDecider, []).when(SetTeamBillingStatus).thenThrows(TeamRuleError, /not found/);
 *
 * `then` and `thenThrows` throw an AssertionError on a mismatch, so a tap test that calls them fails.
 * `then` also folds the decided events through `evolve`, so every event a decider emits is one it can apply.
 */
export function given<State, Command, Event>(decider: Decider<State, Command, Event>, history: Event[]) {
  const state = () => history.reduce((s, e) => decider.evolve(s, e), decider.initialState());
  return {
    when(command: Command) {
      return {
        /** Asserts the decided events equal `expected` exactly; returns the state after them. */
        then(expected: Event[]): State {
          const decided = decider.decide(command, state());
          assert.deepStrictEqual(decided, expected);
          return decided.reduce((s, e) => decider.evolve(s, e), state());
        },
        /** Asserts `decide` throws an instance of `errorClass` (and, when given, a message matching `message`). */
        thenThrows(errorClass: abstract new (...args: never[]) => Error, message?: RegExp): void {
          let thrown: unknown = undefined;
          let decided: Event[] | undefined;
          try {
            decided = decider.decide(command, state());
          } catch (error) {
            thrown = error;
          }
          if (thrown === undefined) assert.fail(`expected ${errorClass.name} but decide returned ${JSON.stringify(decided)}`);
          assert.ok(thrown instanceof errorClass, `expected ${errorClass.name}, got ${String(thrown)}`);
          if (message) assert.match((thrown as Error).message, message);
        },
      };
    },
  };
}
