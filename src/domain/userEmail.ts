import { type Decider, assertNever } from './decider.ts';

/**
 * An email address signs in one user across the whole service. Each address has its own stream,
 * claimed once: the append with 'no_stream' is what makes two concurrent sign-ups of the same
 * address impossible, whichever process they come from. A sign-up whose next step fails releases
 * its claim (a compensating event), and the address can be claimed again.
 */
export const userEmailStream = (emailHash: string) => `user_email-${emailHash}`;

export type UserEmailEvent =
  | { type: 'UserEmailClaimed'; data: { email: string; userId: string; teamId: string; claimedAt: string } }
  | { type: 'UserEmailReleased'; data: { email: string; userId: string; reason: string; releasedAt: string } };
export type UserEmailCommand =
  | { type: 'ClaimUserEmail'; data: { email: string; userId: string; teamId: string; now: string } }
  /** Only the claim's own user releases it; releasing someone else's claim, or none, changes nothing. */
  | { type: 'ReleaseUserEmail'; data: { email: string; userId: string; reason: string; now: string } };
export type UserEmailState = { claimedBy: string | null };

export class EmailTakenError extends Error {
  constructor(readonly email: string) {
    super(`a user with email ${email} exists`);
  }
}

export const userEmailDecider: Decider<UserEmailState, UserEmailCommand, UserEmailEvent> = {
  initialState: () => ({ claimedBy: null }),
  evolve(state, event) {
    switch (event.type) {
      case 'UserEmailClaimed':
        return { claimedBy: event.data.userId };
      case 'UserEmailReleased':
        return { claimedBy: null };
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'ClaimUserEmail': {
        if (state.claimedBy !== null) throw new EmailTakenError(command.data.email);
        const { now, ...claim } = command.data;
        return [{ type: 'UserEmailClaimed', data: { ...claim, claimedAt: now } }];
      }
      case 'ReleaseUserEmail': {
        if (state.claimedBy !== command.data.userId) return [];
        const { now, ...release } = command.data;
        return [{ type: 'UserEmailReleased', data: { ...release, releasedAt: now } }];
      }
      default:
        return assertNever(command);
    }
  },
};
