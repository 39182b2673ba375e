import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { booleanParam, isoBeforeParam, isoParam, pageQuery } from '../pagination.ts';
import { OPPORTUNITY_KINDS } from '../../readModels/opportunities.ts';
import { errors, noQuery, resourceId, siteParams } from '../schemas.ts';
import { opportunitiesPage, opportunityDetail } from '../views/inbox.ts';
import { ENTRY_SOURCES, opportunityObject } from './inboxSchemas.ts';

const listQuery = pageQuery.extend({
  kind: z.enum(OPPORTUNITY_KINDS).optional(),
  entrySource: z.enum(ENTRY_SOURCES).optional(),
  stub: booleanParam.optional(),
  createdAfter: isoParam.optional(),
  createdBefore: isoBeforeParam.optional(),
});

/** The site's opportunities: what each pitch asked for, and what the agents proposed (`kind`). */
const plugin: FastifyPluginAsyncZod = async (app) => {
  const path = '/api/v1/sites/:siteId/outreach/opportunities';

  app.get(
    path,
    {
      config: { access: { scope: 'opportunities:read', site: true } },
      schema: {
        summary: 'List opportunities, newest first, with a cursor',
        tags: ['opportunities'],
        params: siteParams,
        querystring: listQuery,
        response: {
          200: z.object({ opportunities: z.array(opportunityObject), hasMore: z.boolean(), nextCursor: z.string().nullable() }),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async function listOpportunitiesRoute(request) {
      return opportunitiesPage(app.readModels, request.site!.id, request.query);
    },
  );

  app.get(
    `${path}/:opportunityId`,
    {
      config: { access: { scope: 'opportunities:read', site: true } },
      schema: {
        summary: 'Get an opportunity',
        tags: ['opportunities'],
        params: siteParams.extend({ opportunityId: resourceId() }),
        querystring: noQuery,
        response: { 200: z.object({ opportunity: opportunityObject }), ...errors(400, 401, 403, 404) },
      },
    },
    async function getOpportunityRoute(request) {
      return opportunityDetail(app.readModels, request.site!.id, request.params.opportunityId);
    },
  );
};

export const opportunityRoutes = fp(plugin, {
  name: 'opportunity-routes',
  dependencies: ['services', 'authenticate'],
  encapsulate: true,
});
