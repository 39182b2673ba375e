import { type Decider, assertNever } from './decider.ts';
import { normaliseEmail } from './email.ts';
import type { OutreachEventBase } from './outreachEvents.ts';

/** The team-wide suppression list: one stream per team. */
export const suppressionStream = (teamId: string) => `suppression-${teamId}`;

export type ContactSuppressedData = OutreachEventBase & { email: string; reason: string; source: string; upgraded: boolean };
export type SuppressionEvent = { type: 'ContactSuppressed'; data: ContactSuppressedData };

export type SuppressionCommand = {
  type: 'SuppressContact';
  /** One ContactSuppressed per site given, so each site's webhook subscribers hear of it. */
  data: { teamId: string; siteIds: string[]; email: string; reason: string; source: string; now: number };
};

/** email → reason it is suppressed for. */
export type SuppressionState = Map<string, string>;

export const suppressionDecider: Decider<SuppressionState, SuppressionCommand, SuppressionEvent> = {
  initialState: () => new Map(),
  evolve(state, event) {
    switch (event.type) {
      case 'ContactSuppressed':
        return new Map(state).set(event.data.email, event.data.reason);
      default:
        return assertNever(event.type);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'SuppressContact': {
        const email = normaliseEmail(command.data.email);
        const previous = state.get(email);
        // Already suppressed for the same reason: nothing new happened.
        if (previous === command.data.reason) return [];
        // `upgraded`: the contact was on the list already and its reason changed.
        const upgraded = previous !== undefined;
        const { teamId, reason, source, now } = command.data;
        return command.data.siteIds.map((siteId) => ({
          type: 'ContactSuppressed' as const,
          data: { siteId, teamId, occurredAt: now, email, reason, source, upgraded },
        }));
      }
      default:
        return assertNever(command.type);
    }
  },
};
