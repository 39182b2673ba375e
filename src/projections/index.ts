import type { Projection } from './projection.ts';
import { apiKeysProjection, sitesProjection, teamsProjection } from './tenancy.ts';
import { webhookSubscriptionsProjection } from './webhookSubscriptions.ts';

/** Every projection the service runs, in the order they apply a page. */
export const allProjections: Projection[] = [teamsProjection, sitesProjection, apiKeysProjection, webhookSubscriptionsProjection];
