import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { deleteArticle, upsertArticle } from '../../commands/articles.ts';
import { articleLimitReached, notFound } from '../../domain/errors.ts';
import { normaliseArticleUrl } from '../../domain/article.ts';
import { type ArticleDoc, bodyBytes, findArticleByUrl, getArticle, getArticleTotals, listArticlesPage } from '../../readModels/articles.ts';
import type { SiteDoc } from '../../readModels/sites.ts';
import { decodeCursor, isoParam, pageOf, pageQuery } from '../pagination.ts';
import { cleanText, errors, nonBlankText, noQuery, resourceId, siteParams } from '../schemas.ts';
import { refuseBody } from '../refuseBody.ts';
import { actingFor } from '../actingFor.ts';
import { inSiteTurn } from '../siteTurns.ts';

const isoTimestamp = z.string().meta({ format: 'date-time' });
const isoDate = isoParam;
export const ARTICLE_BODY_MAX_CHARS = 500_000;

export const upsertBody = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      // Only a URL can carry credentials: not a URL is z.url's one message.
      .refine((u) => {
        const parsed = URL.canParse(u) ? new URL(u) : null;
        return parsed === null || (!parsed.username && !parsed.password);
      }, 'must not carry credentials (user:password@)')
      .meta({ description: "the article's address on the site's domain; the upsert key" }),
    title: nonBlankText().trim().max(500),
    html: cleanText().max(ARTICLE_BODY_MAX_CHARS).optional().meta({ description: 'the body as HTML (give html or text)' }),
    text: cleanText().max(ARTICLE_BODY_MAX_CHARS).optional().meta({ description: 'the body as plain text, paragraphs separated by blank lines' }),
    publishedAt: isoDate.nullable().default(null),
    updatedAt: isoDate.nullable().default(null),
  })
  .strict()
  .refine((b) => (b.html === undefined) !== (b.text === undefined), { message: 'give exactly one of html and text' });

const articleSummary = z.object({
  id: z.string(),
  siteId: z.string(),
  url: z.string(),
  title: z.string(),
  format: z.enum(['html', 'text']),
  wordCount: z.number().int(),
  internalLinks: z.array(z.string()),
  publishedAt: isoTimestamp.nullable(),
  updatedAt: isoTimestamp.nullable(),
  createdAt: isoTimestamp,
  changedAt: isoTimestamp.meta({ description: 'when the service last recorded a change' }),
});
const articleObject = articleSummary.extend({
  text: z.string().meta({ description: 'plain text extracted from the body, paragraphs separated by blank lines' }),
  html: z.string().nullable().meta({ description: 'the body as sent, for an HTML article' }),
});

const summaryOf = (a: ArticleDoc): z.infer<typeof articleSummary> => ({
  id: a.id,
  siteId: a.siteId,
  url: a.url,
  title: a.title,
  format: a.format,
  wordCount: a.wordCount,
  internalLinks: a.links,
  publishedAt: a.publishedAt,
  updatedAt: a.updatedAt,
  createdAt: a.createdAt,
  changedAt: a.changedAt,
});
const articleOf = (a: ArticleDoc): z.infer<typeof articleObject> => ({ ...summaryOf(a), text: a.text, html: a.format === 'html' ? a.body : null });

/**
 * PUT .../articles and the MCP tool `sync_article`: the upsert, then the article as it now reads.
 * A site's upserts take turns (`inSiteTurn`): concurrent requests cannot pass the limits together.
 */
export async function syncArticle(app: FastifyInstance, site: SiteDoc, body: z.output<typeof upsertBody>) {
  const { url, title, html, text, publishedAt, updatedAt } = body;
  const format = html !== undefined ? 'html' : 'text';
  const content = { url, title, format, body: html ?? text ?? '', publishedAt, updatedAt } as const;
  const result = await inSiteTurn(app.readModels, 'articles', site.id, async () => {
    await checkArticleLimits(app, site, content);
    const upserted = await upsertArticle(app, { teamId: site.teamId, siteId: site.id, siteDomain: site.domain, content });
    await app.waitForWrite(upserted.position);
    return upserted;
  });
  const doc = await getArticle(app.readModels, result.articleId);
  if (!doc || doc.siteId !== site.id) throw notFound('Article not found.');
  return { created: result.created, article: articleOf(doc) };
}

/**
 * SITE_MAX_ARTICLES and SITE_MAX_ARTICLE_BYTES, against the read model's totals. An update that does not grow the site is always taken (a limit lowered
 * below what a site holds must not stop it from fixing or shortening its articles).
 */
async function checkArticleLimits(app: FastifyInstance, site: SiteDoc, content: { url: string; body: string }): Promise<void> {
  const { SITE_MAX_ARTICLES: maxCount, SITE_MAX_ARTICLE_BYTES: maxBytes } = app.config;
  let url: string;
  try {
    url = normaliseArticleUrl(content.url);
  } catch {
    return; // not a URL: the upsert refuses it with its own message
  }
  const [totals, existing] = await Promise.all([getArticleTotals(app.readModels, site.id), findArticleByUrl(app.readModels, site.id, url)]);
  if (!existing && totals.count + 1 > maxCount) throw articleLimitReached(`A site may hold at most ${maxCount} articles`);
  const growth = bodyBytes(content.body) - (existing ? bodyBytes(existing.body) : 0);
  if (growth > 0 && totals.bytes + growth > maxBytes) {
    throw articleLimitReached(`A site's article bodies may take at most ${maxBytes} bytes (UTF-8); it holds ${totals.bytes}, and this would add ${growth}`);
  }
}

const articleParams = siteParams.extend({ articleId: resourceId() });

/** A site's articles: what the content agents work on (and what the MCP tool `sync_article` writes). */
const plugin: FastifyPluginAsyncZod = async (app) => {
  const path = '/api/v1/sites/:siteId/articles';

  app.put(
    path,
    {
      config: { access: { scope: 'articles:write', site: true } },
      schema: {
        summary: "Create or update an article, keyed by its URL (201 created, 200 updated or unchanged)",
        tags: ['articles'],
        params: siteParams,
        body: upsertBody,
        response: { 201: z.object({ article: articleObject }), 200: z.object({ article: articleObject }), ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async function upsertArticleRoute(request, reply) {
      const { created, article } = await syncArticle(actingFor(app, request), request.site!, request.body);
      return reply.status(created ? 201 : 200).send({ article });
    },
  );

  app.get(
    path,
    {
      config: { access: { scope: 'articles:read', site: true } },
      schema: {
        summary: 'List articles, newest first, with a cursor (without their text)',
        tags: ['articles'],
        params: siteParams,
        querystring: pageQuery.extend({ changedAfter: isoParam.optional() }),
        response: {
          200: z.object({ articles: z.array(articleSummary), hasMore: z.boolean(), nextCursor: z.string().nullable() }),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async function listArticlesRoute(request) {
      const { limit, cursor, ...filters } = request.query;
      const docs = await listArticlesPage(app.readModels, request.site!.id, filters, decodeCursor(cursor), limit);
      const page = pageOf(docs, limit, 'createdAt');
      return { articles: page.items.map(summaryOf), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
  );

  app.get(
    `${path}/:articleId`,
    {
      config: { access: { scope: 'articles:read', site: true } },
      schema: {
        summary: 'Get an article with its extracted text',
        tags: ['articles'],
        params: articleParams,
        querystring: noQuery,
        response: { 200: z.object({ article: articleObject }), ...errors(400, 401, 403, 404) },
      },
    },
    async function getArticleRoute(request) {
      const doc = await getArticle(app.readModels, request.params.articleId);
      if (!doc || doc.siteId !== request.site!.id) throw notFound('Article not found.');
      return { article: articleOf(doc) };
    },
  );

  app.delete(
    `${path}/:articleId`,
    {
      config: { access: { scope: 'articles:write', site: true } },
      preHandler: refuseBody,
      schema: {
        summary: 'Delete an article',
        tags: ['articles'],
        params: articleParams,
        response: { 200: z.object({ success: z.literal(true) }), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async function deleteArticleRoute(request) {
      const site = request.site!;
      const doc = await getArticle(app.readModels, request.params.articleId);
      if (!doc || doc.siteId !== site.id) throw notFound('Article not found.');
      const result = await deleteArticle(actingFor(app, request), { teamId: site.teamId, siteId: site.id, url: doc.url });
      await app.waitForWrite(result.position);
      return { success: true as const };
    },
  );
};

export const articleRoutes = fp(plugin, { name: 'article-routes', dependencies: ['services', 'authenticate'], encapsulate: true });
