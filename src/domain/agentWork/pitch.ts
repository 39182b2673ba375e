/**
 * The Outreach Agent's cold pitch: which of the site's articles suits the prospect (the most
 * content words shared between the prospect's home page and the article's title and opening),
 * and the mail offering it. Pure.
 */
import type { ArticleInput } from '../agentWork.ts';
import { contentWords } from './text.ts';

/** The article whose title (twice) and first paragraph share most words with the prospect's page; null when none shares any title word. */
export function bestArticleFor(prospectText: string, articles: readonly ArticleInput[]): ArticleInput | null {
  const prospect = new Set(contentWords(prospectText));
  let best: { article: ArticleInput; score: number } | null = null;
  for (const a of articles) {
    const title = new Set(contentWords(a.title));
    const titleHits = [...title].filter((w) => prospect.has(w)).length;
    if (titleHits === 0) continue;
    const opening = new Set(contentWords(a.text.split(/\n\s*\n/)[0] ?? ''));
    const score = titleHits * 2 + [...opening].filter((w) => prospect.has(w)).length;
    if (!best || score > best.score) best = { article: a, score };
  }
  return best?.article ?? null;
}

export interface PitchInput {
  siteDomain: string;
  prospectName: string | null;
  prospectUrl: string;
  article: ArticleInput | null;
  senderName: string | null;
  signature: string | null;
}

export function composePitch(p: PitchInput): { subject: string; text: string } {
  const host = new URL(p.prospectUrl).hostname.replace(/^www\./, '');
  const who = p.prospectName?.trim() || host;
  const sender = p.senderName?.trim() || p.siteDomain;
  const subject = p.article ? `A resource for ${who}: ${p.article.title}`.slice(0, 200) : `${p.siteDomain} and ${who}`.slice(0, 200);
  const lines = [
    `Hi ${p.prospectName?.trim() ? p.prospectName.trim() : 'there'},`,
    '',
    `I have been reading ${who} (${p.prospectUrl}) and enjoyed it.`,
  ];
  if (p.article) {
    lines.push(
      '',
      `We recently published "${p.article.title}" on ${p.siteDomain}:`,
      p.article.url,
      '',
      'If you think it would help your readers, a link from a related page on your site would be very welcome. Happy to return the favour where it fits.',
    );
  } else {
    lines.push('', `We write about related topics on ${p.siteDomain} (https://${p.siteDomain}). Would you be open to linking to each other where it helps readers?`);
  }
  lines.push('', 'If this is not for you, just reply "no thanks" and I will not write again.', '', p.signature?.trim() || `Best,\n${sender}`);
  return { subject, text: lines.join('\n') };
}
