import { type Decider, assertNever } from './decider.ts';
import { normaliseEmail } from './email.ts';
import type { OutreachEventBase } from './outreachEvents.ts';

/** The team-wide suppression list: one stream per team. */
export const suppressionStream = (teamId: string) => `suppression-${teamId}`;

export type ContactSuppressedData = OutreachEventBase & { email: string; reason: string; source: string; upgraded: boolean };
export type ContactUnsuppressedData = OutreachEventBase & { email: string; source: string };
export type SuppressionEvent = { type: 'ContactSuppressed'; data: ContactSuppressedData } | { type: 'ContactUnsuppressed'; data: ContactUnsuppressedData };

export type SuppressionCommand =
  | {
      type: 'SuppressContact';
      /** One ContactSuppressed per site given, so each site's webhook subscribers hear of it. */
      data: { teamId: string; siteIds: string[]; email: string; reason: string; source: string; now: number };
    }
  | {
      /** Takes an address off the list; the stream keeps its whole history. `siteId`: where it was asked. */
      type: 'UnsuppressContact';
      data: { teamId: string; siteId: string; email: string; source: string; now: number };
    };

/**
 * Reasons from weakest to strongest. An address already on the list moves only to a stronger
 * reason (`upgraded` true); a weaker or equal one records nothing. A complaint (the contact marked
 * our mail as spam) outweighs a hard bounce (the address does not exist), which outweighs an
 * opt-out, which outweighs an operator's manual entry.
 */
export const SUPPRESSION_REASONS = ['manual', 'opted_out', 'bounced', 'complained'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];
export const SUPPRESSION_SOURCES = ['manual', 'inbound_classifier', 'bounce', 'complaint'] as const;
export type SuppressionSource = (typeof SUPPRESSION_SOURCES)[number];
const strength = (reason: string) => SUPPRESSION_REASONS.indexOf(reason as SuppressionReason);

export const isSuppressed = (state: SuppressionState, email: string) => state.has(normaliseEmail(email));

/** email → reason it is suppressed for. */
export type SuppressionState = Map<string, string>;

export const suppressionDecider: Decider<SuppressionState, SuppressionCommand, SuppressionEvent> = {
  initialState: () => new Map(),
  evolve(state, event) {
    switch (event.type) {
      case 'ContactSuppressed':
        return new Map(state).set(event.data.email, event.data.reason);
      case 'ContactUnsuppressed': {
        const next = new Map(state);
        next.delete(event.data.email);
        return next;
      }
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'SuppressContact': {
        const email = normaliseEmail(command.data.email);
        const previous = state.get(email);
        // Already suppressed for this reason or a stronger one: nothing new happened.
        if (previous !== undefined && strength(command.data.reason) <= strength(previous)) return [];
        // `upgraded`: the contact was on the list already and moves to a stronger reason.
        const upgraded = previous !== undefined;
        const { teamId, reason, source, now } = command.data;
        return command.data.siteIds.map((siteId) => ({
          type: 'ContactSuppressed' as const,
          data: { siteId, teamId, occurredAt: now, email, reason, source, upgraded },
        }));
      }
      case 'UnsuppressContact': {
        const email = normaliseEmail(command.data.email);
        // Not on the list: nothing to remove.
        if (!state.has(email)) return [];
        const { teamId, siteId, source, now } = command.data;
        return [{ type: 'ContactUnsuppressed' as const, data: { siteId, teamId, occurredAt: now, email, source } }];
      }
      default:
        return assertNever(command);
    }
  },
};
