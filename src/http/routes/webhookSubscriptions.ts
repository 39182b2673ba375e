import type { BlockList } from 'node:net';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createSubscription, deleteSubscription, rotateSubscriptionSecret, updateSubscription } from '../../commands/webhookSubscriptions.ts';
import { MAX_ROTATION_GRACE_SECONDS } from '../../domain/webhookSubscription.ts';
import { webhookUrlProblem } from '../../domain/destination.ts';
import { notFound, subscriptionDisabled, subscriptionLimitReached, unauthorized, validationError } from '../../domain/errors.ts';
import { undoIfClientDeleted } from '../../commands/oauth.ts';
import { WEBHOOK_EVENT_TYPES } from '../../domain/eventCatalog.ts';
import { type WebhookSubscriptionDoc, getSubscription, listSubscriptionsForSite, subscriptionDocOf } from '../../readModels/webhookSubscriptions.ts';
import { errors, isServiceId, nonBlankText, noQuery, resourceId, siteParams } from '../schemas.ts';
import { refuseBody } from '../refuseBody.ts';
import { actingFor } from '../actingFor.ts';
import { inSiteTurn } from '../siteTurns.ts';
import { DISPLAY_NAME_MESSAGE, isDisplayName } from '../../domain/text.ts';

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

// Shown to the team in the dashboard, and set by any client with webhooks:write (an OAuth app too):
// a name others trust, so no line break or bidirectional override ("abc\u202egnp.exe").
const label = nonBlankText()
  .refine((s) => [...s].length <= 120, 'must be at most 120 characters')
  .refine(isDisplayName, DISPLAY_NAME_MESSAGE)
  // The refinement's bound, in the OpenAPI document (characters, as JSON Schema counts them).
  .meta({ maxLength: 120 });
const url = z.string().min(1).max(2000).meta({ description: 'HTTPS URL, at most 2000 characters' });
const eventTypes = z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1);

/** Strict, as PATCH: a field this route does not take (`active: false`) is refused, not ignored. */
const createBody = z.strictObject({ label, url, eventTypes });

/** PATCH: any of the three, with the create rules; anything else is refused rather than ignored. */
const updateBody = z
  .strictObject({ label: label.optional(), url: url.optional(), eventTypes: eventTypes.optional() })
  .refine((b) => b.label !== undefined || b.url !== undefined || b.eventTypes !== undefined, 'give at least one of label, url, eventTypes');

const rotateBody = z.strictObject({
  graceSeconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_ROTATION_GRACE_SECONDS)
    .meta({ description: 'How long the previous secret keeps signing too (a second v1= in Service-Signature), 0 to 86400 seconds' }),
});

const subscriptionParams = siteParams.extend({ id: resourceId() });

/** The response shape of create and update (the list leaves out team, site and updated_at). */
const responseOf = (doc: WebhookSubscriptionDoc) => doc as z.infer<typeof createdSubscription>;

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
      const credential = request.credential!;
      // WEBHOOK_MAX_SUBSCRIPTIONS_PER_SITE, counted in the read model; a site's creations take turns (inSiteTurn).
      const { created, secret } = await inSiteTurn(app.readModels, 'webhook subscriptions', request.site!.id, async () => {
        const limit = app.config.WEBHOOK_MAX_SUBSCRIPTIONS_PER_SITE;
        const existing = await listSubscriptionsForSite(app.readModels, request.site!.id);
        if (existing.length >= limit) throw subscriptionLimitReached(limit);
        const made = await createSubscription(actingFor(app, request), {
          teamId: credential.teamId,
          siteId: request.site!.id,
          label: request.body.label,
          url: request.body.url,
          eventTypes: request.body.eventTypes,
          createdByOauthClientId: credential.oauthClientId,
        });
        if (credential.oauthClientId && (await undoIfClientDeleted(actingFor(app, request), { id: made.subscriptionId, siteId: made.created.siteId, clientId: credential.oauthClientId }))) {
          throw unauthorized('The OAuth client behind this token was deleted.');
        }
        await app.waitForWrite(made.position, 'answer');
        return made;
      });
      return reply.status(201).send({ subscription: subscriptionDocOf(created), secret });
    },
  );

  app.get(
    path,
    {
      config: { access: { scope: 'webhooks:read', site: true, licence: 'open' } },
      schema: {
        summary: 'List webhook subscriptions',
        tags: ['webhooks'],
        params: siteParams,
        querystring: noQuery,
        response: { 200: z.object({ subscriptions: z.array(listedSubscription) }), ...errors(400, 401, 403, 404) },
      },
    },
    async function listSubscriptionsRoute(request) {
      const docs = await listSubscriptionsForSite(app.readModels, request.site!.id, { sortBy: 'id' });
      return { subscriptions: docs.map(({ team_id: _t, site_id: _s, updated_at: _u, ...listed }) => listed as z.infer<typeof listedSubscription>) };
    },
  );

  /** The site's subscription, as the read model has it; 404 when missing or another site's. */
  async function subscriptionOfSite(siteId: string, id: string): Promise<WebhookSubscriptionDoc> {
    const doc = isServiceId(id) ? await getSubscription(app.readModels, id) : null;
    if (!doc || doc.site_id !== siteId) throw notFound('Webhook subscription not found.');
    return doc;
  }

  app.patch(
    `${path}/:id`,
    {
      config: { access: { scope: 'webhooks:write', site: true } },
      schema: {
        summary: 'Update a webhook subscription (label, url, eventTypes)',
        tags: ['webhooks'],
        params: subscriptionParams,
        body: updateBody,
        response: { 200: z.object({ subscription: createdSubscription }), ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async function updateSubscriptionRoute(request) {
      const siteId = request.site!.id;
      const { id } = request.params;
      const before = await subscriptionOfSite(siteId, id);
      if (!before.is_active) throw subscriptionDisabled();
      if (request.body.url !== undefined) {
        const problem = webhookUrlProblem(request.body.url, allowedRanges);
        if (problem) throw validationError(problem);
      }
      const { position } = await updateSubscription(actingFor(app, request), { siteId, subscriptionId: id, changes: request.body });
      await app.waitForWrite(position);
      return { subscription: responseOf(await subscriptionOfSite(siteId, id)) };
    },
  );

  app.post(
    `${path}/:id/rotate-secret`,
    {
      config: { access: { scope: 'webhooks:write', site: true } },
      schema: {
        summary: 'Rotate the signing secret (the new one is returned once)',
        tags: ['webhooks'],
        params: subscriptionParams,
        body: rotateBody,
        response: {
          200: z.object({ subscription: createdSubscription, secret: z.string(), previous_secret_expires_at: isoTimestamp.nullable() }),
          ...errors(400, 401, 403, 404, 409, 429),
        },
      },
    },
    async function rotateSubscriptionSecretRoute(request) {
      const siteId = request.site!.id;
      const { id } = request.params;
      const before = await subscriptionOfSite(siteId, id);
      if (!before.is_active) throw subscriptionDisabled();
      const rotated = await rotateSubscriptionSecret(actingFor(app, request), { siteId, subscriptionId: id, graceSeconds: request.body.graceSeconds });
      await app.waitForWrite(rotated.position, 'answer');
      // From the rotation itself: the read model may not include it yet (see waitForWrite's 'answer').
      const subscription = { ...responseOf(await subscriptionOfSite(siteId, id)), secret_prefix: rotated.secretPrefix, updated_at: rotated.rotatedAt };
      return { subscription, secret: rotated.secret, previous_secret_expires_at: rotated.previousSecretExpiresAt };
    },
  );

  app.delete(
    `${path}/:id`,
    {
      config: { access: { scope: 'webhooks:write', site: true, licence: 'open' } },
      preHandler: refuseBody,
      schema: {
        summary: 'Delete a webhook subscription and its delivery history',
        tags: ['webhooks'],
        params: subscriptionParams,
        response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async function deleteSubscriptionRoute(request) {
      const { id } = request.params;
      if (!isServiceId(id)) throw notFound('Webhook subscription not found.');
      const { position } = await deleteSubscription(actingFor(app, request), { siteId: request.site!.id, subscriptionId: id });
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
