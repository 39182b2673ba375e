import { z } from 'zod';
import { isoDateTime, utcBound } from '../../http/pagination.ts';
import { opportunitiesPage, opportunityDetail } from '../../http/views/inbox.ts';
import { ENTRY_SOURCES } from '../../http/routes/inboxSchemas.ts';
import { OPPORTUNITY_KINDS } from '../../readModels/opportunities.ts';
import { defineTool } from './tool.ts';
import { pageInput } from './paging.ts';

/** The site's link opportunities: what each pitch asked for (REST: /api/v1/sites/{siteId}/outreach/opportunities). */
export const opportunityTools = [
  defineTool({
    name: 'list_opportunities',
    title: 'List link opportunities',
    description:
      'Lists the link opportunities of a site, newest first: what each prospect asked for (target URL, anchor text, suggested sentence, the page of the site the link would go on), and what the agents proposed (kind). Pass nextCursor back as cursor for the next page.',
    scope: 'opportunities:read',
    input: {
      ...pageInput,
      kind: z.enum(OPPORTUNITY_KINDS).optional().describe("only this kind: inbound_pitch (a pitch's ask) or the key of the agent that proposed it"),
      entrySource: z.enum(ENTRY_SOURCES).optional().describe('only opportunities that entered this way'),
      stub: z.boolean().optional().describe('true: only stubs (no ask extracted); false: only real asks'),
      createdAfter: isoDateTime.optional(),
      createdBefore: isoDateTime.optional(),
    },
    run: ({ siteId: _siteId, createdAfter, createdBefore, ...query }, { app, site }) =>
      opportunitiesPage(app.readModels, site.id, {
        ...query,
        ...(createdAfter ? { createdAfter: utcBound(createdAfter, 'after') } : {}),
        ...(createdBefore ? { createdBefore: utcBound(createdBefore, 'before') } : {}),
      }),
  }),
  defineTool({
    name: 'get_opportunity',
    title: 'Get a link opportunity',
    description: 'Gets one link opportunity of a site by its id.',
    scope: 'opportunities:read',
    input: { opportunityId: z.string().min(1).max(100) },
    run: ({ opportunityId }, { app, site }) => opportunityDetail(app.readModels, site.id, opportunityId),
  }),
];
