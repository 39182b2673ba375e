import { type Decider, assertNever } from './decider.ts';

export const PLANS = ['starter', 'pro', 'advanced'] as const;
export type Plan = (typeof PLANS)[number];

export const siteStream = (siteId: string) => `site-${siteId}`;

/** Settings an operator may change after creation; each is optional in a change. */
export interface SiteSettings {
  plan: Plan;
  licensed: boolean;
  sendingDomainVerified: boolean;
  aiCredits: number;
  dailyIngestionCap: number;
  dailyExtractionCap: number;
}

export const DEFAULT_SITE_SETTINGS: Omit<SiteSettings, 'plan'> = {
  licensed: true,
  sendingDomainVerified: false,
  aiCredits: 0,
  dailyIngestionCap: 500,
  dailyExtractionCap: 100,
};

export type SiteEvent =
  | {
      type: 'SiteCreated';
      data: { siteId: string; teamId: string; domain: string; forwardingToken: string; createdAt: string } & SiteSettings;
    }
  | { type: 'SiteSettingsChanged'; data: { siteId: string; changes: Partial<SiteSettings>; changedAt: string } }
  /** Outbound webhooks on or off for the site (on from creation until the first switch). */
  | { type: 'SiteWebhooksSwitched'; data: { siteId: string; enabled: boolean; switchedAt: string } };

export type SiteCommand =
  | { type: 'CreateSite'; data: { siteId: string; teamId: string; domain: string; plan: Plan; forwardingToken: string; now: string } }
  | { type: 'ChangeSiteSettings'; data: { siteId: string; changes: Partial<SiteSettings>; now: string } }
  | { type: 'SwitchSiteWebhooks'; data: { siteId: string; enabled: boolean; now: string } };

/** A new site delivers webhooks to its subscriptions. */
export const WEBHOOKS_ENABLED_BY_DEFAULT = true;

export type SiteState = { status: 'none' } | { status: 'exists'; settings: SiteSettings; webhooksEnabled?: boolean };

export class SiteRuleError extends Error {}

export const siteDecider: Decider<SiteState, SiteCommand, SiteEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'SiteCreated': {
        const { plan, licensed, sendingDomainVerified, aiCredits, dailyIngestionCap, dailyExtractionCap } = event.data;
        return { status: 'exists', settings: { plan, licensed, sendingDomainVerified, aiCredits, dailyIngestionCap, dailyExtractionCap } };
      }
      case 'SiteSettingsChanged':
        return state.status === 'exists' ? { ...state, settings: { ...state.settings, ...event.data.changes } } : state;
      case 'SiteWebhooksSwitched':
        return state.status === 'exists' ? { ...state, webhooksEnabled: event.data.enabled } : state;
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'CreateSite': {
        if (state.status !== 'none') throw new SiteRuleError('site already exists');
        const { now, ...site } = command.data;
        return [{ type: 'SiteCreated', data: { ...site, ...DEFAULT_SITE_SETTINGS, createdAt: now } }];
      }
      case 'ChangeSiteSettings': {
        if (state.status !== 'exists') throw new SiteRuleError('site not found');
        const changes: Partial<SiteSettings> = {};
        for (const [key, value] of Object.entries(command.data.changes) as [keyof SiteSettings, never][]) {
          if (value !== undefined && state.settings[key] !== value) changes[key] = value;
        }
        if (Object.keys(changes).length === 0) return [];
        return [{ type: 'SiteSettingsChanged', data: { siteId: command.data.siteId, changes, changedAt: command.data.now } }];
      }
      case 'SwitchSiteWebhooks': {
        if (state.status !== 'exists') throw new SiteRuleError('site not found');
        if ((state.webhooksEnabled ?? WEBHOOKS_ENABLED_BY_DEFAULT) === command.data.enabled) return [];
        return [{ type: 'SiteWebhooksSwitched', data: { siteId: command.data.siteId, enabled: command.data.enabled, switchedAt: command.data.now } }];
      }
      default:
        return assertNever(command);
    }
  },
};
