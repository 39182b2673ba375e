import { dashboardSessionsProjection, oauthProjection } from './oauth.ts';
import { agentSettingsProjection } from './agentSettings.ts';
import { articlesProjection } from './articles.ts';
import { agentRunsProjection } from './agentRuns.ts';
import { inboxProjection } from './inbox.ts';
import type { Projection } from './projection.ts';
import { suppressionsProjection } from './suppressions.ts';
import { apiKeysProjection, sitesProjection, teamsProjection } from './tenancy.ts';
import { webhookDeliveriesProjection } from './webhookDeliveries.ts';
import { webhookSubscriptionsProjection } from './webhookSubscriptions.ts';

/** Every projection the service runs, in the order they apply a page. */
export const allProjections: Projection[] = [teamsProjection, sitesProjection, apiKeysProjection, webhookSubscriptionsProjection];
allProjections.push(oauthProjection, dashboardSessionsProjection);
allProjections.push(webhookDeliveriesProjection);
allProjections.push(inboxProjection, agentSettingsProjection, suppressionsProjection);
allProjections.push(articlesProjection, agentRunsProjection);
