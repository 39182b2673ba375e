import { type Decider, assertNever } from './decider.ts';

/**
 * An email address signs in one user across the whole service. Each address has its own stream,
 * claimed once: the append with 'no_stream' is what makes two concurrent sign-ups of the same
 * address impossible, whichever process they come from.
 */
export const userEmailStream = (emailHash: string) => `user_email-${emailHash}`;

export type UserEmailEvent = { type: 'UserEmailClaimed'; data: { email: string; userId: string; teamId: string; claimedAt: string } };
export type UserEmailCommand = { type: 'ClaimUserEmail'; data: { email: string; userId: string; teamId: string; now: string } };
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
      default:
        return assertNever(event.type);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'ClaimUserEmail': {
        if (state.claimedBy !== null) throw new EmailTakenError(command.data.email);
        const { now, ...claim } = command.data;
        return [{ type: 'UserEmailClaimed', data: { ...claim, claimedAt: now } }];
      }
      default:
        return assertNever(command.type);
    }
  },
};
