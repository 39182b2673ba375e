import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { suppressContact, unsuppressContact } from '../../commands/suppression.ts';
import { emailAddress, normaliseEmail } from '../../domain/email.ts';
import { ServiceError, notFound } from '../../domain/errors.ts';
import { SUPPRESSION_REASONS } from '../../domain/suppression.ts';
import { listSitesOfTeam } from '../../readModels/sites.ts';
import { getSuppression, listSuppressionsPage } from '../../readModels/suppressions.ts';
import type { Credential } from '../credentials.ts';
import { decodeCursor, pageOf, pageQuery } from '../pagination.ts';
import { errors, siteParams } from '../schemas.ts';
import { refuseBody } from '../refuseBody.ts';
import { suppressionObject, suppressionOf } from './inboxSchemas.ts';
import { actingFor } from '../actingFor.ts';

const addBody = z.strictObject({
  email: emailAddress,
  reason: z.enum(SUPPRESSION_REASONS).default('manual'),
});

/**
 * The team's suppression list (one list for every site of the team; the site in the path is the one
 * the change is recorded for, so its webhook subscribers hear of an addition). Anyone who may write
 * to a site may add to it; reading or removing entries, which other sites recorded, needs a
 * credential that reaches every site of the team.
 */
const plugin: FastifyPluginAsyncZod = async (app) => {
  const path = '/api/v1/sites/:siteId/outreach/suppressions';

  async function assertReachesEveryTeamSite(credential: Credential, teamId: string, reply: FastifyReply): Promise<void> {
    if (credential.siteIds === null) return;
    const reached = new Set(credential.siteIds);
    if ((await listSitesOfTeam(app.readModels, teamId)).every((site) => reached.has(site.id))) return;
    // RFC 6750 §3.1, as every 403 INSUFFICIENT_SCOPE: no scope to name (none would do), the reason instead.
    reply.header('www-authenticate', 'Bearer error="insufficient_scope", error_description="a credential for every site of the team is needed"');
    throw new ServiceError(
      'INSUFFICIENT_SCOPE',
      "The suppression list is the whole team's: reading or removing entries needs a credential for every site of the team; this one is restricted to some of them.",
    );
  }

  app.get(
    path,
    {
      config: { access: { scope: 'inbox:read', site: true } },
      schema: {
        summary: "List the team's suppression list, by address, with a cursor",
        tags: ['suppressions'],
        params: siteParams,
        querystring: pageQuery,
        response: {
          200: z.object({ suppressions: z.array(suppressionObject), hasMore: z.boolean(), nextCursor: z.string().nullable() }),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async function listSuppressionsRoute(request, reply) {
      await assertReachesEveryTeamSite(request.credential!, request.site!.teamId, reply);
      const { limit, cursor } = request.query;
      const docs = await listSuppressionsPage(app.readModels, request.site!.teamId, decodeCursor(cursor), limit);
      const page = pageOf(docs, limit, 'email');
      return { suppressions: page.items.map(suppressionOf), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
  );

  app.post(
    path,
    {
      config: { access: { scope: 'inbox:write', site: true } },
      schema: {
        summary: 'Add an address to the suppression list (200 when it was already there for this reason or a stronger one)',
        tags: ['suppressions'],
        params: siteParams,
        body: addBody,
        response: { 201: z.object({ suppression: suppressionObject }), 200: z.object({ suppression: suppressionObject }), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async function addSuppressionRoute(request, reply) {
      const site = request.site!;
      const result = await suppressContact(actingFor(app, request), {
        teamId: site.teamId,
        teamSiteIds: [site.id],
        siteId: site.id,
        email: request.body.email,
        reason: request.body.reason,
        source: 'manual',
      });
      await app.waitForWrite(result.position);
      const doc = await getSuppression(app.readModels, site.teamId, result.email);
      if (!doc) throw notFound('Suppression not found.'); // removed again between the write and this read
      return reply.status(result.suppressed ? 201 : 200).send({ suppression: suppressionOf(doc) });
    },
  );

  app.delete(
    `${path}/:email`,
    {
      config: { access: { scope: 'inbox:write', site: true } },
      preHandler: refuseBody,
      schema: {
        summary: 'Remove an address from the suppression list (recorded as an event; the history stays)',
        tags: ['suppressions'],
        params: siteParams.extend({ email: z.string().min(1).max(320) }),
        response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async function removeSuppressionRoute(request, reply) {
      const site = request.site!;
      await assertReachesEveryTeamSite(request.credential!, site.teamId, reply);
      const result = await unsuppressContact(actingFor(app, request), { teamId: site.teamId, siteId: site.id, email: normaliseEmail(request.params.email), source: 'manual' });
      if (!result.removed) throw notFound('This address is not on the suppression list.');
      await app.waitForWrite(result.position);
      return { success: true as const };
    },
  );
};

export const suppressionRoutes = fp(plugin, {
  name: 'suppression-routes',
  dependencies: ['services', 'read-your-writes', 'authenticate'],
  encapsulate: true,
});
