import { type ArticleContent, ArticleRuleError, articleDecider, articleStream, normaliseArticleUrl } from '../domain/article.ts';
import { isOnSite } from '../domain/articleText.ts';
import { notFound, siteNotFound, validationError } from '../domain/errors.ts';
import { siteDecider, siteStream } from '../domain/site.ts';
import { aggregateStream } from './aggregateStream.ts';
import type { CommandContext } from './context.ts';
import { handleCommand } from './handleCommand.ts';

export interface UpsertArticleInput {
  teamId: string;
  siteId: string;
  siteDomain: string;
  content: ArticleContent;
}

/**
 * Creates or updates a site's article, keyed by its URL (`ArticleUpserted`; nothing when nothing
 * changed). The URL must be on the site's domain: the agents link and fetch by it.
 */
export async function upsertArticle(ctx: CommandContext, input: UpsertArticleInput) {
  const { state: site } = await aggregateStream(ctx.events, siteStream(input.siteId), siteDecider);
  if (site.status !== 'exists') throw siteNotFound();
  if (!isOnSite(input.content.url, input.siteDomain)) throw validationError(`url must be a page of the site's domain ${input.siteDomain}.`);
  const content = { ...input.content, url: normaliseArticleUrl(input.content.url) };
  const result = await handleCommand(ctx, articleStream(input.siteId, content.url), articleDecider, {
    type: 'UpsertArticle',
    data: { articleId: ctx.newId(), siteId: input.siteId, teamId: input.teamId, siteDomain: input.siteDomain, content, now: ctx.clock.now().toISOString() },
  });
  const { state } = await aggregateStream(ctx.events, articleStream(input.siteId, content.url), articleDecider);
  if (state.status !== 'exists') throw notFound('Article not found.'); // deleted between the write and this read
  const upserted = result.events[0];
  return { articleId: state.articleId, created: upserted?.type === 'ArticleUpserted' && upserted.data.created, changed: result.events.length > 0, position: result.position };
}

/** Removes a site's article (`ArticleDeleted`); NOT_FOUND when there is none at that URL. */
export async function deleteArticle(ctx: CommandContext, input: { teamId: string; siteId: string; url: string }) {
  try {
    const result = await handleCommand(ctx, articleStream(input.siteId, input.url), articleDecider, {
      type: 'DeleteArticle',
      data: { siteId: input.siteId, teamId: input.teamId, now: ctx.clock.now().toISOString() },
    });
    return { position: result.position };
  } catch (error) {
    if (error instanceof ArticleRuleError) throw notFound('Article not found.');
    throw error;
  }
}
