import { toDomainEvent } from '../lib/parseEvent.ts';
import { API_KEYS, API_KEYS_BY_HASH, type ApiKeyByHashDoc, type ApiKeyDoc } from '../readModels/apiKeys.ts';
import { SITES, type SiteDoc } from '../readModels/sites.ts';
import { TEAMS, type TeamDoc } from '../readModels/teams.ts';
import { INVITATIONS, type InvitationDoc } from '../readModels/teamInvitations.ts';
import { USERS, type UserDoc } from '../readModels/users.ts';
import { type Projection, handles } from './projection.ts';

/** Still imported from here by the forwarding mailbox, which another change is moving. */

export const teamsProjection: Projection = {
  name: 'teams',
  // 2: users removed, their roles and passwords changed; 3: their sign-outs everywhere, and invitations (each rebuilt, for what an older server passed over).
  version: 3,
  collections: [TEAMS, USERS, INVITATIONS],
  canHandle: handles(['TeamCreated', 'TeamBillingStatusChanged', 'UserAdded', 'UserRemoved', 'UserRoleChanged', 'UserPasswordChanged', 'UserSignedOutEverywhere', 'UserInvited', 'InvitationCancelled', 'InvitationAccepted']),
  async handle(recorded, w) {
    const event = toDomainEvent(recorded);
    if (!event) return;
    switch (event.type) {
      case 'TeamCreated': {
        const { teamId, name, createdAt } = event.data;
        const doc: TeamDoc = { id: teamId, name, billingStatus: 'healthy', createdAt };
        return w.put(TEAMS, doc);
      }
      case 'TeamBillingStatusChanged': {
        const team = await w.get<TeamDoc>(TEAMS, event.data.teamId);
        if (team) await w.put(TEAMS, { ...team, billingStatus: event.data.billingStatus });
        return;
      }
      case 'UserAdded': {
        const { userId, teamId, email, role, passwordHash, addedAt } = event.data;
        const doc: UserDoc = { id: userId, teamId, email, role, passwordHash, createdAt: addedAt };
        return w.put(USERS, doc);
      }
      case 'UserRemoved':
        return w.remove(USERS, event.data.userId);
      case 'UserRoleChanged': {
        const user = await w.get<UserDoc>(USERS, event.data.userId);
        if (user) await w.put(USERS, { ...user, role: event.data.role });
        return;
      }
      case 'UserPasswordChanged': {
        const user = await w.get<UserDoc>(USERS, event.data.userId);
        if (user) await w.put(USERS, { ...user, passwordHash: event.data.passwordHash });
        return;
      }
      case 'UserSignedOutEverywhere': {
        const user = await w.get<UserDoc>(USERS, event.data.userId);
        if (user) await w.put(USERS, { ...user, sessionEpoch: (user.sessionEpoch ?? 0) + 1 });
        return;
      }
      case 'UserInvited': {
        const { invitationId, teamId, email, role, codeHash, invitedBy, invitedAt, expiresAt } = event.data;
        const doc: InvitationDoc = { id: invitationId, teamId, email, role, codeHash, invitedBy, invitedAt, expiresAt };
        return w.put(INVITATIONS, doc);
      }
      case 'InvitationCancelled':
      case 'InvitationAccepted':
        return w.remove(INVITATIONS, event.data.invitationId);
    }
  },
};

export const sitesProjection: Projection = {
  name: 'sites',
  version: 1,
  collections: [SITES],
  canHandle: handles(['SiteCreated', 'SiteSettingsChanged', 'SiteWebhooksSwitched']),
  async handle(recorded, w) {
    const event = toDomainEvent(recorded);
    if (!event) return;
    switch (event.type) {
      case 'SiteCreated': {
        const { siteId, createdAt, ...rest } = event.data;
        const doc: SiteDoc = { id: siteId, ...rest, createdAt };
        return w.put(SITES, doc);
      }
      case 'SiteSettingsChanged': {
        const site = await w.get<SiteDoc>(SITES, event.data.siteId);
        if (site) await w.put(SITES, { ...site, ...event.data.changes });
        return;
      }
      case 'SiteWebhooksSwitched': {
        const site = await w.get<SiteDoc>(SITES, event.data.siteId);
        if (site) await w.put(SITES, { ...site, webhooksEnabled: event.data.enabled });
        return;
      }
    }
  },
};

export const apiKeysProjection: Projection = {
  name: 'apiKeys',
  version: 1,
  collections: [API_KEYS, API_KEYS_BY_HASH],
  canHandle: handles(['ApiKeyCreated', 'ApiKeyRevoked', 'ApiKeyUsed']),
  async handle(recorded, w) {
    const event = toDomainEvent(recorded);
    if (!event) return;
    switch (event.type) {
      case 'ApiKeyCreated': {
        const { apiKeyId, createdAt, ...rest } = event.data;
        const doc: ApiKeyDoc = { id: apiKeyId, ...rest, revoked: false, revokedAt: null, lastUsedAt: null, createdAt };
        const byHash: ApiKeyByHashDoc = { id: rest.keyHash, apiKeyId };
        await w.put(API_KEYS_BY_HASH, byHash);
        return w.put(API_KEYS, doc);
      }
      case 'ApiKeyRevoked': {
        const key = await w.get<ApiKeyDoc>(API_KEYS, event.data.apiKeyId);
        if (key) await w.put(API_KEYS, { ...key, revoked: true, revokedAt: event.data.revokedAt });
        return;
      }
      case 'ApiKeyUsed': {
        const key = await w.get<ApiKeyDoc>(API_KEYS, event.data.apiKeyId);
        if (key) await w.put(API_KEYS, { ...key, lastUsedAt: event.data.usedAt });
        return;
      }
    }
  },
};
