import { validationError } from '../../domain/errors.ts';
import { syncArticle, upsertBody } from '../../http/routes/articles.ts';
import { type McpTool, defineTool } from './tool.ts';

/** The site's articles (REST: PUT /api/v1/sites/{siteId}/articles), what the content agents work on. */
export const articleTools: McpTool[] = [
  defineTool({
    name: 'sync_article',
    title: 'Create or update an article',
    description:
      "Creates or updates an article of the site, keyed by its URL (on the site's domain): title, the body as html or as text (exactly one), and publishedAt/updatedAt. Answers the article with its extracted text and whether it was created.",
    scope: 'articles:write',
    write: true,
    annotations: { destructiveHint: false, idempotentHint: true },
    input: upsertBody.shape,
    run: async ({ siteId: _siteId, ...body }, { app, site }) => {
      // The REST body's refinement, which the tool's own object (with siteId) does not carry.
      if ((body.html === undefined) === (body.text === undefined)) throw validationError('give exactly one of html and text');
      return syncArticle(app, site, body);
    },
  }),
];
