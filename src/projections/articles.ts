import { htmlToText, internalLinks, normaliseParagraphs, wordCount } from '../domain/articleText.ts';
import { articleEventSchemas } from '../domain/eventSchemas.ts';
import { parseEvent } from '../lib/parseEvent.ts';
import { ARTICLES, ARTICLE_TOTALS, type ArticleDoc, type ArticleTotalsDoc, bodyBytes } from '../readModels/articles.ts';
import type { ProjectionWriter } from '../ports/readModelStore.ts';
import { type Projection, handles } from './projection.ts';

/**
 * A site's articles with their text extracted and internal links listed (bump the version when the
 * extraction changes), and each site's totals, which the upsert checks its limits against.
 */
export const articlesProjection: Projection = {
  name: 'articles',
  version: 2,
  collections: [ARTICLES, ARTICLE_TOTALS],
  canHandle: handles(['ArticleUpserted', 'ArticleDeleted']),
  async handle(recorded, w) {
    const event = parseEvent(recorded, articleEventSchemas);
    if (!event) return;
    if (event.type === 'ArticleDeleted') {
      const gone = await w.get<ArticleDoc>(ARTICLES, event.data.articleId);
      if (gone) await addToTotals(w, gone.siteId, -1, -bodyBytes(gone.body));
      return w.remove(ARTICLES, event.data.articleId);
    }
    const d = event.data;
    const current = await w.get<ArticleDoc>(ARTICLES, d.articleId);
    await addToTotals(w, d.siteId, current ? 0 : 1, bodyBytes(d.body) - (current ? bodyBytes(current.body) : 0));
    const text = d.format === 'html' ? htmlToText(d.body) : normaliseParagraphs(d.body);
    const doc: ArticleDoc = {
      id: d.articleId,
      siteId: d.siteId,
      teamId: d.teamId,
      url: d.url,
      title: d.title,
      format: d.format,
      body: d.body,
      text,
      links: d.format === 'html' ? internalLinks(d.body, d.url, d.siteDomain) : [],
      wordCount: wordCount(text),
      publishedAt: d.publishedAt,
      updatedAt: d.updatedAt,
      createdAt: current?.createdAt ?? d.upsertedAt,
      changedAt: d.upsertedAt,
    };
    await w.put(ARTICLES, doc);
  },
};

async function addToTotals(w: ProjectionWriter, siteId: string, count: number, bytes: number): Promise<void> {
  const totals = await w.get<ArticleTotalsDoc>(ARTICLE_TOTALS, siteId);
  const next: ArticleTotalsDoc = { id: siteId, count: (totals?.count ?? 0) + count, bytes: (totals?.bytes ?? 0) + bytes };
  if (next.count <= 0) await w.remove(ARTICLE_TOTALS, siteId);
  else await w.put(ARTICLE_TOTALS, next);
}
