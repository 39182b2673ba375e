import type { BlockList } from 'node:net';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createSubscription, deleteSubscription } from '../../commands/webhookSubscriptions.ts';
import { webhookUrlProblem } from '../../domain/destination.ts';
import { notFound, subscriptionLimitReached, unauthorized, validationError } from '../../domain/errors.ts';
import { undoIfClientDeleted } from '../../commands/oauth.ts';
import { WEBHOOK_EVENT_TYPES } from '../../domain/eventCatalog.ts';
import { listSubscriptionsForSite, subscriptionDocOf } from '../../readModels/webhookSubscriptions.ts';
import { errors, siteParams } from '../schemas.ts';

const isoTimestamp = z.string().meta({ format: 'date-time' });

const listedSubscription = z.object({
  id: z.string(),
  label: z.string(),
  url: z.string(),
  secret_prefix: z.string(),
  event_types: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  is_active: z.boolean(),
  consecutive_failures: z.number().int(),
  created_by_oauth_client_id: z.string().nullable(),
  created_at: isoTimestamp,
  last_delivery_at: isoTimestamp.nullable(),
  last_delivery_status: z.string().nullable(),
});

const createdSubscription = listedSubscription.extend({ team_id: z.string(), site_id: z.string(), updated_at: isoTimestamp });

const createBody = z.object({
  label: z
    .string()
    .min(1)
    .refine((s) => s.trim().length > 0, 'must not be blank')
    .refine((s) => [...s].length <= 120, 'must be at most 120 characters'),
  url: z.string().min(1).max(2000).meta({ description: 'HTTPS URL, at most 2000 characters' }),
  eventTypes: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1),
});

const ID_SHAPE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const plugin: FastifyPluginAsyncZod<{ allowedRanges: BlockList }> = async (app, { allowedRanges }) => {
  const path = '/api/v1/sites/:siteId/outreach/webhooks';

  app.post(
    path,
    {
      config: { access: { scope: 'webhooks:write', site: true } },
      schema: {
        summary: 'Register a webhook subscription',
        tags: ['webhooks'],
        params: siteParams,
        body: createBody,
        response: { 201: z.object({ subscription: createdSubscription, secret: z.string() }), ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async function createSubscriptionRoute(request, reply) {
      const problem = webhookUrlProblem(request.body.url, allowedRanges);
      if (problem) throw validationError(problem);
      // WEBHOOK_MAX_SUBSCRIPTIONS_PER_SITE, counted in the read model: concurrent creations may pass it by a few.
      const limit = app.config.WEBHOOK_MAX_SUBSCRIPTIONS_PER_SITE;
      const existing = await listSubscriptionsForSite(app.readModels, request.site!.id);
      if (existing.length >= limit) throw subscriptionLimitReached(limit);
      const credential = request.credential!;
      const { subscriptionId, created, secret, position } = await createSubscription(app, {
        teamId: credential.teamId,
        siteId: request.site!.id,
        label: request.body.label,
        url: request.body.url,
        eventTypes: request.body.eventTypes,
        createdByOauthClientId: credential.oauthClientId,
      });
      if (credential.oauthClientId && (await undoIfClientDeleted(app, { id: subscriptionId, siteId: created.siteId, clientId: credential.oauthClientId }))) {
        throw unauthorized('The OAuth client behind this token was deleted.');
      }
      await app.waitForWrite(position);
      return reply.status(201).send({ subscription: subscriptionDocOf(created), secret });
    },
  );

  app.get(
    path,
    {
      config: { access: { scope: 'webhooks:read', site: true } },
      schema: {
        summary: 'List webhook subscriptions',
        tags: ['webhooks'],
        params: siteParams,
        response: { 200: z.object({ subscriptions: z.array(listedSubscription) }), ...errors(401, 403, 404) },
      },
    },
    async function listSubscriptionsRoute(request) {
      const docs = await listSubscriptionsForSite(app.readModels, request.site!.id, { sortBy: 'id' });
      return { subscriptions: docs.map(({ team_id: _t, site_id: _s, updated_at: _u, ...listed }) => listed as z.infer<typeof listedSubscription>) };
    },
  );

  app.delete(
    `${path}/:id`,
    {
      config: { access: { scope: 'webhooks:write', site: true } },
      schema: {
        summary: 'Delete a webhook subscription and its delivery history',
        tags: ['webhooks'],
        params: siteParams.extend({ id: z.string().min(1).max(100) }),
        response: { 200: z.object({ success: z.literal(true) }), ...errors(401, 403, 404) },
      },
    },
    async function deleteSubscriptionRoute(request) {
      const { id } = request.params;
      if (!ID_SHAPE.test(id)) throw notFound('Webhook subscription not found.');
      const { position } = await deleteSubscription(app, { siteId: request.site!.id, subscriptionId: id });
      await app.waitForWrite(position);
      return { success: true as const };
    },
  );
};

export const webhookSubscriptionRoutes = fp(plugin, {
  name: 'webhook-subscription-routes',
  dependencies: ['services', 'read-your-writes', 'authenticate'],
  encapsulate: true,
});
