import { type Decider, assertNever } from './decider.ts';
import { normaliseEmail } from './email.ts';
import { ImmutableMap } from './immutableMap.ts';

/**
 * The Outreach Agent's prospects for one site: the lists the team imports, and what the agent did
 * with each (pitched, or skipped with a reason). One stream per site; the daily send cap is
 * decided here, so two runs of the same day cannot together exceed it.
 */
export const prospectsStream = (siteId: string) => `prospects-${siteId}`;

export interface Prospect {
  /** The prospect's site (https URL, normalised: lower-case host, no fragment). */
  url: string;
  name: string | null;
  notes: string | null;
}

export const PROSPECT_SKIP_REASONS = ['no_contact_found', 'contact_suppressed', 'robots_disallowed', 'unreachable', 'not_on_prospect_domain', 'contact_already_pitched'] as const;
export type ProspectSkipReason = (typeof PROSPECT_SKIP_REASONS)[number];

type Base = { siteId: string; teamId: string; occurredAt: number };

export type ProspectEvent =
  | { type: 'ProspectsImported'; data: Base & { importId: string; prospects: Prospect[] } }
  | { type: 'ProspectPitched'; data: Base & { prospectUrl: string; contactEmail: string; conversationId: string; runId: string } }
  | { type: 'ProspectSkipped'; data: Base & { prospectUrl: string; reason: ProspectSkipReason; detail: string; runId: string } };

export type ProspectCommand =
  | { type: 'ImportProspects'; data: Base & { importId: string; prospects: Prospect[] } }
  | {
      type: 'RecordPitch';
      data: Base & { prospectUrl: string; contactEmail: string; conversationId: string; runId: string; dailySendCap: number };
    }
  | { type: 'SkipProspect'; data: Base & { prospectUrl: string; reason: ProspectSkipReason; detail: string; runId: string } };

export type ProspectStatus = 'new' | 'pitched' | 'skipped';

/**
 * Persistent maps: a site's stream grows by an event per prospect pitched or skipped, thousands of
 * them, and copying a `Map` (or an array of pitch times) per event made its fold quadratic.
 */
export interface ProspectsState {
  /** By URL, in import order. */
  prospects: ImmutableMap<Prospect & { status: ProspectStatus; skipReason: ProspectSkipReason | null }>;
  /** Pitches per UTC day (`YYYY-MM-DD`), for the daily cap. */
  pitchesByDay: ImmutableMap<number>;
  /** Contact address (lower case) → the prospect URL it was pitched for: a person gets one cold pitch from the site. */
  pitchedContacts: ImmutableMap<string>;
}

export class ProspectRuleError extends Error {
  constructor(
    readonly code: 'DAILY_SEND_CAP_REACHED' | 'PROSPECT_NOT_FOUND' | 'PROSPECT_ALREADY_HANDLED' | 'CONTACT_ALREADY_PITCHED',
    message: string,
  ) {
    super(message);
  }
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Pitches already sent on the UTC day of `now`. */
export const pitchesOn = (state: ProspectsState, now: number) => state.pitchesByDay.get(dayOf(now)) ?? 0;

export const prospectsDecider: Decider<ProspectsState, ProspectCommand, ProspectEvent> = {
  initialState: () => ({ prospects: ImmutableMap.empty(), pitchesByDay: ImmutableMap.empty(), pitchedContacts: ImmutableMap.empty() }),
  evolve(state, event) {
    switch (event.type) {
      case 'ProspectsImported': {
        let prospects = state.prospects;
        for (const p of event.data.prospects) {
          const known = prospects.get(p.url);
          // Importing a known prospect again updates its name and notes, never what was done with it.
          prospects = prospects.set(p.url, { ...p, status: known?.status ?? 'new', skipReason: known?.skipReason ?? null });
        }
        return { ...state, prospects };
      }
      case 'ProspectPitched': {
        const day = dayOf(event.data.occurredAt);
        return {
          prospects: withStatus(state, event.data.prospectUrl, 'pitched', null),
          pitchesByDay: state.pitchesByDay.set(day, (state.pitchesByDay.get(day) ?? 0) + 1),
          pitchedContacts: state.pitchedContacts.set(normaliseEmail(event.data.contactEmail), event.data.prospectUrl),
        };
      }
      case 'ProspectSkipped':
        return { ...state, prospects: withStatus(state, event.data.prospectUrl, 'skipped', event.data.reason) };
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'ImportProspects': {
        const c = command.data;
        const prospects = c.prospects.filter((p) => {
          const known = state.prospects.get(p.url);
          return !known || known.name !== p.name || known.notes !== p.notes;
        });
        if (prospects.length === 0) return [];
        return [{ type: 'ProspectsImported', data: { ...c, prospects } }];
      }
      case 'RecordPitch': {
        const { dailySendCap, ...c } = command.data;
        const prospect = requireNew(state, c.prospectUrl);
        if (!prospect) return [];
        const pitchedFor = state.pitchedContacts.get(normaliseEmail(c.contactEmail));
        if (pitchedFor !== undefined) throw new ProspectRuleError('CONTACT_ALREADY_PITCHED', `${c.contactEmail} was already pitched (for ${pitchedFor})`);
        if (pitchesOn(state, c.occurredAt) >= dailySendCap) {
          throw new ProspectRuleError('DAILY_SEND_CAP_REACHED', `the daily send cap (${dailySendCap}) is reached for ${dayOf(c.occurredAt)}`);
        }
        return [{ type: 'ProspectPitched', data: c }];
      }
      case 'SkipProspect': {
        const c = command.data;
        if (!requireNew(state, c.prospectUrl)) return [];
        return [{ type: 'ProspectSkipped', data: c }];
      }
      default:
        return assertNever(command);
    }
  },
};

/** The prospect when it is still to be handled; null when it was handled already (a retry records nothing). */
function requireNew(state: ProspectsState, url: string) {
  const prospect = state.prospects.get(url);
  if (!prospect) throw new ProspectRuleError('PROSPECT_NOT_FOUND', `no prospect ${url}`);
  return prospect.status === 'new' ? prospect : null;
}

function withStatus(state: ProspectsState, url: string, status: ProspectStatus, skipReason: ProspectSkipReason | null) {
  const current = state.prospects.get(url);
  if (!current) return state.prospects;
  return state.prospects.set(url, { ...current, status, skipReason });
}

/** A prospect URL as the stream keys it: https only, lower-case host, no fragment, no trailing slash on a bare host. */
export function normaliseProspectUrl(raw: string): string | null {
  const text = raw.trim();
  if (!text) return null;
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    return null;
  }
  // A domain, or an address literal (IPv4, or IPv6 in brackets).
  if (url.protocol !== 'https:' || !url.hostname.includes('.') && url.hostname !== 'localhost' && !url.hostname.startsWith('[')) return null;
  if (url.username || url.password) return null;
  url.hash = '';
  return url.toString().replace(/\/$/, '');
}

/** The outreach agent's prospect criteria (`prospectCriteria` in its settings); the per-run limit is `maxProspectsPerRun`, beside them. */
export interface ProspectCriteria {
  keywords: readonly string[];
}

/** Whether a prospect fits the criteria: with keywords, one of them appears in its URL, name or notes (any case). */
export function fitsCriteria(prospect: Prospect, criteria: ProspectCriteria): boolean {
  if (criteria.keywords.length === 0) return true;
  const haystack = `${prospect.url} ${prospect.name ?? ''} ${prospect.notes ?? ''}`.toLowerCase();
  return criteria.keywords.some((k) => haystack.includes(k.toLowerCase()));
}

/** The criteria as stored in the run's settings (absent or malformed: no keywords). */
export function criteriaOf(settings: Record<string, unknown>): ProspectCriteria {
  const c = settings.prospectCriteria as Partial<ProspectCriteria> | undefined;
  const keywords = Array.isArray(c?.keywords) ? c.keywords.filter((k): k is string => typeof k === 'string' && k.trim() !== '') : [];
  return { keywords };
}
