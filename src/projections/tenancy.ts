import type { ApiKeyEvent } from '../domain/apiKey.ts';
import type { SiteEvent } from '../domain/site.ts';
import type { TeamEvent } from '../domain/team.ts';
import type { RecordedEvent } from '../ports/eventStore.ts';
import { type Projection, handles } from './projection.ts';

export interface TeamDoc {
  [key: string]: unknown;
  id: string;
  name: string;
  billingStatus: 'healthy' | 'past_due' | 'canceled';
  createdAt: string;
}

export interface UserDoc {
  [key: string]: unknown;
  id: string;
  teamId: string;
  email: string;
  role: 'owner' | 'admin' | 'member';
  passwordHash: string | null;
  createdAt: string;
}

export interface SiteDoc {
  [key: string]: unknown;
  id: string;
  teamId: string;
  domain: string;
  plan: 'starter' | 'pro' | 'advanced';
  licensed: boolean;
  sendingDomainVerified: boolean;
  aiCredits: number;
  dailyIngestionCap: number;
  dailyExtractionCap: number;
  forwardingToken: string;
  createdAt: string;
}

export interface ApiKeyDoc {
  [key: string]: unknown;
  id: string;
  teamId: string;
  name: string;
  scopes: string[];
  siteId: string | null;
  keyHash: string;
  revoked: boolean;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

export const teamsProjection: Projection = {
  name: 'teams',
  version: 1,
  collections: ['teams', 'users'],
  canHandle: handles(['TeamCreated', 'TeamBillingStatusChanged', 'UserAdded']),
  async handle(recorded, w) {
    const event = recorded as RecordedEvent & TeamEvent;
    switch (event.type) {
      case 'TeamCreated': {
        const { teamId, name, createdAt } = event.data;
        const doc: TeamDoc = { id: teamId, name, billingStatus: 'healthy', createdAt };
        return w.put('teams', doc);
      }
      case 'TeamBillingStatusChanged': {
        const team = await w.get<TeamDoc>('teams', event.data.teamId);
        if (team) await w.put('teams', { ...team, billingStatus: event.data.billingStatus });
        return;
      }
      case 'UserAdded': {
        const { userId, teamId, email, role, passwordHash, addedAt } = event.data;
        const doc: UserDoc = { id: userId, teamId, email, role, passwordHash, createdAt: addedAt };
        return w.put('users', doc);
      }
    }
  },
};

export const sitesProjection: Projection = {
  name: 'sites',
  version: 1,
  collections: ['sites'],
  canHandle: handles(['SiteCreated', 'SiteSettingsChanged']),
  async handle(recorded, w) {
    const event = recorded as RecordedEvent & SiteEvent;
    switch (event.type) {
      case 'SiteCreated': {
        const { siteId, createdAt, ...rest } = event.data;
        const doc: SiteDoc = { id: siteId, ...rest, createdAt };
        return w.put('sites', doc);
      }
      case 'SiteSettingsChanged': {
        const site = await w.get<SiteDoc>('sites', event.data.siteId);
        if (site) await w.put('sites', { ...site, ...event.data.changes });
        return;
      }
    }
  },
};

export const apiKeysProjection: Projection = {
  name: 'apiKeys',
  version: 1,
  collections: ['apiKeys', 'apiKeysByHash'],
  canHandle: handles(['ApiKeyCreated', 'ApiKeyRevoked', 'ApiKeyUsed']),
  async handle(recorded, w) {
    const event = recorded as RecordedEvent & ApiKeyEvent;
    switch (event.type) {
      case 'ApiKeyCreated': {
        const { apiKeyId, createdAt, ...rest } = event.data;
        const doc: ApiKeyDoc = { id: apiKeyId, ...rest, revoked: false, revokedAt: null, lastUsedAt: null, createdAt };
        await w.put('apiKeysByHash', { id: rest.keyHash, apiKeyId });
        return w.put('apiKeys', doc);
      }
      case 'ApiKeyRevoked': {
        const key = await w.get<ApiKeyDoc>('apiKeys', event.data.apiKeyId);
        if (key) await w.put('apiKeys', { ...key, revoked: true, revokedAt: event.data.revokedAt });
        return;
      }
      case 'ApiKeyUsed': {
        const key = await w.get<ApiKeyDoc>('apiKeys', event.data.apiKeyId);
        if (key) await w.put('apiKeys', { ...key, lastUsedAt: event.data.usedAt });
        return;
      }
    }
  },
};
