import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { fromUtf8 } from '../charset.ts';
import { importProspects } from '../../commands/prospects.ts';
import { OUTREACH_AGENT_PLANS } from '../../domain/agents.ts';
import { planRequired, validationError } from '../../domain/errors.ts';
import { MAX_PROSPECTS_PER_IMPORT, prospectsFromCsv, prospectsFromEntries } from '../../domain/prospectList.ts';
import { errors, siteParams } from '../schemas.ts';
import { actingFor } from '../actingFor.ts';

const CSV_BODY_LIMIT = 2 * 1024 * 1024;

const entry = z.strictObject({
  url: z.string().min(1).max(2000),
  name: z.string().max(200).nullable().optional(),
  notes: z.string().max(2000).nullable().optional(),
});
const entries = z.array(entry).min(1).max(MAX_PROSPECTS_PER_IMPORT);

/** JSON `{ "prospects": [...] }` or a bare list, or the text of a CSV file (`Content-Type: text/csv`). */
const body = z.union([z.strictObject({ prospects: entries }), entries, z.string().max(CSV_BODY_LIMIT)]);

const importResult = z.object({
  importId: z.string().nullable().meta({ description: 'null when every prospect was already known unchanged' }),
  imported: z.number().int(),
  unchanged: z.number().int(),
});

/**
 * The Outreach Agent's prospect list: the sites the team wants pitched. Each import is a
 * `ProspectsImported` fact in the site's prospects stream; the agent's runs work through it.
 */
const plugin: FastifyPluginAsyncZod = async (app) => {
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(['text/csv', 'text/plain'], { parseAs: 'buffer', bodyLimit: CSV_BODY_LIMIT }, fromUtf8((_request, text, done) => done(null, text)));

  app.post(
    '/api/v1/sites/:siteId/agents/outreach/prospects',
    {
      bodyLimit: CSV_BODY_LIMIT,
      config: { access: { scope: 'agents:write', site: true } },
      // As the agent endpoints: the plan before the body is validated.
      preValidation: async (request: FastifyRequest) => {
        if (!OUTREACH_AGENT_PLANS.includes(request.site!.plan)) throw planRequired('The Outreach Agent needs the Advanced plan.');
      },
      schema: {
        summary: "Import prospects for the Outreach Agent (JSON list or a CSV file with columns url,name,notes); 201 when any was new or changed",
        tags: ['agents'],
        params: siteParams,
        body,
        response: { 201: importResult, 200: importResult, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async function importProspectsRoute(request, reply) {
      const site = request.site!;
      const input = request.body;
      const list = typeof input === 'string' ? prospectsFromCsv(input) : prospectsFromEntries(Array.isArray(input) ? input : input.prospects);
      if (!list.ok) throw validationError(`Invalid prospect list: ${list.errors.join('; ')}`);
      const result = await importProspects(actingFor(app, request), { siteId: site.id, teamId: site.teamId, prospects: list.prospects });
      await app.waitForWrite(result.position);
      return reply.status(result.imported > 0 ? 201 : 200).send({ importId: result.importId, imported: result.imported, unchanged: result.unchanged });
    },
  );
};

export const prospectRoutes = fp(plugin, {
  name: 'prospect-routes',
  dependencies: ['services', 'read-your-writes', 'authenticate'],
  encapsulate: true,
});
