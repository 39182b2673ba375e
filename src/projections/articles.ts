import { htmlToText, internalLinks, normaliseParagraphs, wordCount } from '../domain/articleText.ts';
import { articleEventSchemas } from '../domain/eventSchemas.ts';
import { parseEvent } from '../lib/parseEvent.ts';
import { ARTICLES, type ArticleDoc } from '../readModels/articles.ts';
import { type Projection, handles } from './projection.ts';

/** A site's articles with their text extracted and internal links listed (bump the version when the extraction changes). */
export const articlesProjection: Projection = {
  name: 'articles',
  version: 1,
  collections: [ARTICLES],
  canHandle: handles(['ArticleUpserted', 'ArticleDeleted']),
  async handle(recorded, w) {
    const event = parseEvent(recorded, articleEventSchemas);
    if (!event) return;
    if (event.type === 'ArticleDeleted') return w.remove(ARTICLES, event.data.articleId);
    const d = event.data;
    const current = await w.get<ArticleDoc>(ARTICLES, d.articleId);
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
