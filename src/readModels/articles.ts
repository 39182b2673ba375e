import type { ArticleFormat } from '../domain/article.ts';
import type { ArticleInput } from '../domain/agentWork.ts';
import type { PageQuery, ReadModelStore, SortValue } from '../ports/readModelStore.ts';

/** The `articles` read model, written by the articles projection: each article's text already extracted. */
export const ARTICLES = 'articles';

/** The site's articles list, newest first (`changedAfter` is checked on the walk). */
export const ARTICLE_INDEXES = [['siteId', 'createdAt']] as const;

export interface ArticleDoc {
  [key: string]: unknown;
  id: string;
  siteId: string;
  teamId: string;
  url: string;
  title: string;
  format: ArticleFormat;
  /** The body as the client sent it (HTML or text). */
  body: string;
  /** Plain text, paragraphs separated by a blank line. */
  text: string;
  /** Absolute URLs of the body's links to the site itself. */
  links: string[];
  wordCount: number;
  publishedAt: string | null;
  updatedAt: string | null;
  createdAt: string;
  /** When the service last recorded a change. */
  changedAt: string;
}

/** Per site: how many articles it holds and the UTF-8 bytes of their bodies (SITE_MAX_ARTICLES, SITE_MAX_ARTICLE_BYTES). */
export const ARTICLE_TOTALS = 'articleTotals';

export interface ArticleTotalsDoc {
  [key: string]: unknown;
  /** The site's id. */
  id: string;
  count: number;
  bytes: number;
}

export const bodyBytes = (body: string) => Buffer.byteLength(body, 'utf8');

/**
 * The site's totals. Without a totals document (a site with no articles, or the articles projection
 * still rebuilding into its version 2, which added the totals) they are counted from the articles
 * the read model holds, so the limits hold in that window too; for a site without articles that is
 * one empty indexed lookup.
 */
export async function getArticleTotals(store: ReadModelStore, siteId: string): Promise<{ count: number; bytes: number }> {
  const doc = await store.get<ArticleTotalsDoc>(ARTICLE_TOTALS, siteId);
  if (doc) return { count: doc.count, bytes: doc.bytes };
  const articles = await store.find<ArticleDoc>(ARTICLES, { siteId });
  return { count: articles.length, bytes: articles.reduce((sum, a) => sum + bodyBytes(a.body), 0) };
}

export const getArticle = (store: ReadModelStore, articleId: string) => store.get<ArticleDoc>(ARTICLES, articleId);

export async function findArticleByUrl(store: ReadModelStore, siteId: string, url: string): Promise<ArticleDoc | null> {
  const [doc] = await store.find<ArticleDoc>(ARTICLES, { siteId, url });
  return doc ?? null;
}

export interface ArticleFilters {
  changedAfter?: string;
}

/** A page of the site's articles, newest first (createdAt, then id); one extra to tell whether more follow. */
export function listArticlesPage(store: ReadModelStore, siteId: string, filters: ArticleFilters, after: { value: SortValue; id: string } | null, limit: number) {
  const ranges: PageQuery['ranges'] = {};
  if (filters.changedAfter !== undefined) ranges.changedAt = { gt: filters.changedAfter };
  return store.page<ArticleDoc>(ARTICLES, { filter: { siteId }, ranges, orderBy: 'createdAt', direction: 'desc', after, limit: limit + 1 });
}

export const articleInputOf = (doc: ArticleDoc): ArticleInput => ({
  id: doc.id,
  url: doc.url,
  title: doc.title,
  text: doc.text,
  links: doc.links,
  publishedAt: doc.publishedAt,
  updatedAt: doc.updatedAt,
});

/** Every article of the site as the agents see them (`AgentWorkDeps.articles`), in URL order. */
export async function articleInputsOf(store: ReadModelStore, siteId: string): Promise<ArticleInput[]> {
  const docs = await store.find<ArticleDoc>(ARTICLES, { siteId }, { sortBy: 'url' });
  return docs.map(articleInputOf);
}
