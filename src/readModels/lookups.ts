import type { LookupDeclarations } from '../ports/readModelStore.ts';
import { AGENT_SETTINGS } from './agentSettings.ts';
import { API_KEYS } from './apiKeys.ts';
import { DASHBOARD_SESSIONS } from './dashboardSessions.ts';
import { INVITATIONS } from './teamInvitations.ts';
import { ARTICLES } from './articles.ts';
import { OAUTH_CLIENTS } from './oauthClients.ts';
import { OAUTH_GRANTS } from './oauthGrants.ts';
import { OAUTH_TOKENS } from './oauthTokens.ts';
import { SITES } from './sites.ts';
import { USERS } from './users.ts';
import { WEBHOOK_DELIVERIES } from './webhookDeliveries.ts';
import { WEBHOOK_SUBSCRIPTIONS } from './webhookSubscriptions.ts';

/**
 * Every filter a `find` of the service uses (the query functions in this folder, the projections'
 * look-ups), so MongoDB indexes them (see LookupDeclarations). A `find` with no filter reads the
 * whole collection by design (the worker's own small lists).
 */
export const READ_MODEL_LOOKUPS: LookupDeclarations = {
  [AGENT_SETTINGS]: [['active']],
  [API_KEYS]: [['teamId']],
  [DASHBOARD_SESSIONS]: [['userId']],
  [INVITATIONS]: [['codeHash'], ['teamId']],
  [ARTICLES]: [['siteId', 'url']],
  [OAUTH_CLIENTS]: [['teamId']],
  [OAUTH_GRANTS]: [['clientId'], ['teamId', 'revoked']],
  [OAUTH_TOKENS]: [['clientId'], ['grantId'], ['tokenId'], ['teamId', 'revoked']],
  [SITES]: [['teamId'], ['forwardingToken']],
  [USERS]: [['email'], ['teamId']],
  [WEBHOOK_DELIVERIES]: [['subscription_id'], ['state']],
  [WEBHOOK_SUBSCRIPTIONS]: [['site_id'], ['created_by_oauth_client_id']],
};
