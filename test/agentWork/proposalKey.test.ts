import t from 'tap';
import { proposalKey } from '../../src/domain/agentWork.ts';

t.test('two proposals are the same opportunity when their keys are equal', async (t) => {
  const link = { kind: 'interlinking' as const, sourceArticleId: 'a1', sourceUrl: 'https://x.test/a/', anchor: 'burr grinder', targetArticleId: 'a2', targetUrl: 'https://x.test/b/', sentence: 'A burr grinder.' };
  t.equal(proposalKey(link), proposalKey({ ...link, anchor: 'grinder', sentence: 'Another grinder.' }), 'one link per source and target, whatever its anchor');
  t.not(proposalKey(link), proposalKey({ ...link, sourceArticleId: 'a2', targetArticleId: 'a1' }), 'the other direction is another link');
  const boost = { kind: 'article_boost' as const, articleId: 'a1', url: 'https://x.test/a/', reasons: ['thin' as const, 'stale' as const], detail: 'old' };
  t.equal(proposalKey(boost), proposalKey({ ...boost, reasons: ['stale', 'thin'], detail: 'older' }), 'reasons in any order');
  t.not(proposalKey(boost), proposalKey({ ...boost, reasons: ['stale'] }), 'other reasons: a new proposal');
  const topic = { kind: 'article_creation' as const, topic: 'Moka pot', keywords: [], rationale: 'r' };
  t.equal(proposalKey(topic), proposalKey({ ...topic, topic: 'moka pot ' }));
  const found = { kind: 'article_creation' as const, topic: 'kitchen scale', keywords: ['kitchen scale', 'grams'], rationale: 'r' };
  t.equal(proposalKey(found), proposalKey({ ...found, topic: 'Choosing a Kitchen Scale for Coffee', keywords: [...found.keywords, 'precision'] }), 'a topic a model retitled: its first keyword is the one found');
  const question = { kind: 'ai_prompt' as const, question: 'What is the best moka pot?', articleId: null, url: null, rationale: 'r' };
  t.equal(proposalKey(question), proposalKey({ ...question, question: 'what is the best moka pot?', articleId: 'a9' }));
  t.equal(proposalKey(question), proposalKey({ ...question, question: 'Which moka pot should I buy?', originalQuestion: question.question }), 'a question a model reworded');
  const page = { kind: 'site_performance' as const, url: 'https://x.test/a/', problems: ['slow' as const, 'untitled' as const], status: 200, durationMs: 4000, location: null, detail: 'd' };
  t.equal(proposalKey(page), proposalKey({ ...page, problems: ['untitled', 'slow'], durationMs: 5000 }));
  t.not(proposalKey(page), proposalKey({ ...page, problems: ['broken'] }));
  t.equal(proposalKey({ kind: 'outreach', prospectUrl: 'https://p.test/', contactEmail: 'a@p.test', conversationId: 'c', subject: 's', opportunityId: 'o', offeredUrl: null }), null, 'an outreach proposal is its pitch’s opportunity');
});
