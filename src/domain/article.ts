import { createHash } from 'node:crypto';
import { type Decider, assertNever } from './decider.ts';

/**
 * A site's article, the data the content agents work on. One stream per article, keyed by its URL
 * (`article-<siteId>-<hash of the URL>`), so an upsert reads one article's history, not the site's.
 */
export const articleStream = (siteId: string, url: string) => `article-${siteId}-${articleUrlKey(url)}`;

/** The URL as the upsert key: no fragment, lower-case scheme and host (the URL parser does that). */
export const normaliseArticleUrl = (url: string) => {
  const parsed = new URL(url);
  parsed.hash = '';
  return parsed.toString();
};
export const articleUrlKey = (url: string) => createHash('sha256').update(normaliseArticleUrl(url)).digest('hex').slice(0, 32);

export const ARTICLE_FORMATS = ['html', 'text'] as const;
export type ArticleFormat = (typeof ARTICLE_FORMATS)[number];

/** What a client sends for an article: the body either as HTML or as plain text. */
export interface ArticleContent {
  url: string;
  title: string;
  format: ArticleFormat;
  body: string;
  publishedAt: string | null;
  updatedAt: string | null;
}

export type ArticleEvent =
  | {
      type: 'ArticleUpserted';
      /** `siteDomain` tells which of the body's links are internal. */
      data: { articleId: string; siteId: string; teamId: string; siteDomain: string; created: boolean; upsertedAt: string } & ArticleContent;
    }
  | { type: 'ArticleDeleted'; data: { articleId: string; siteId: string; teamId: string; url: string; deletedAt: string } };

export type ArticleCommand =
  | { type: 'UpsertArticle'; data: { articleId: string; siteId: string; teamId: string; siteDomain: string; content: ArticleContent; now: string } }
  | { type: 'DeleteArticle'; data: { siteId: string; teamId: string; now: string } };

export type ArticleState = { status: 'none' } | { status: 'exists'; articleId: string; content: ArticleContent } | { status: 'deleted'; articleId: string };

export class ArticleRuleError extends Error {}

const sameContent = (a: ArticleContent, b: ArticleContent) =>
  a.url === b.url && a.title === b.title && a.format === b.format && a.body === b.body && a.publishedAt === b.publishedAt && a.updatedAt === b.updatedAt;

export const articleDecider: Decider<ArticleState, ArticleCommand, ArticleEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'ArticleUpserted': {
        const { url, title, format, body, publishedAt, updatedAt } = event.data;
        return { status: 'exists', articleId: event.data.articleId, content: { url, title, format, body, publishedAt, updatedAt } };
      }
      case 'ArticleDeleted':
        return { status: 'deleted', articleId: event.data.articleId };
      default:
        return assertNever(event);
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'UpsertArticle': {
        const { siteId, teamId, siteDomain, content, now } = command.data;
        // An article keeps its id across edits, and across a delete and a re-create of the same URL.
        const articleId = state.status === 'none' ? command.data.articleId : state.articleId;
        if (state.status === 'exists' && sameContent(state.content, content)) return [];
        return [{ type: 'ArticleUpserted', data: { articleId, siteId, teamId, siteDomain, ...content, created: state.status !== 'exists', upsertedAt: now } }];
      }
      case 'DeleteArticle': {
        if (state.status !== 'exists') throw new ArticleRuleError('article not found');
        const { siteId, teamId, now } = command.data;
        return [{ type: 'ArticleDeleted', data: { articleId: state.articleId, siteId, teamId, url: state.content.url, deletedAt: now } }];
      }
      default:
        return assertNever(command);
    }
  },
};
