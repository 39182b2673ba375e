import t from 'tap';
import { aiPromptWork } from '../../src/agentWork/aiPrompt.ts';
import { articleBoostWork } from '../../src/agentWork/articleBoost.ts';
import { articleCreationWork } from '../../src/agentWork/articleCreation.ts';
import { interlinkingWork } from '../../src/agentWork/interlinking.ts';
import { defaultWorkSettings, workSettingsOf, workSettingsSchemas } from '../../src/agentWork/settings.ts';
import { AGENT_KEYS } from '../../src/domain/agents.ts';
import { type OpportunityProposal, proposalKey } from '../../src/domain/agentWork.ts';
import { ARTICLES } from './corpus/homeCoffee.ts';
import { runOf, workDeps, workServices } from './helpers.ts';

t.test('every agent has a strict settings schema with defaults', async (t) => {
  t.same(Object.keys(workSettingsSchemas).sort(), [...AGENT_KEYS].sort());
  t.same(defaultWorkSettings('article_boost'), { staleAfterDays: 365, minWords: 300, minInboundLinks: 1, maxProposals: 50 });
  t.same(defaultWorkSettings('outreach'), { senderName: null, signature: null, dailySendCap: 20, maxProspectsPerRun: 25, requireDomainEmail: false });
  t.notOk(workSettingsSchemas.interlinking.safeParse({ maxLinksPerSource: 3, colour: 'red' }).success, 'unknown key refused');
  t.notOk(workSettingsSchemas.interlinking.safeParse({ maxLinksPerSource: 0 }).success, 'below the bound');
  t.notOk(workSettingsSchemas.site_performance.safeParse({ slowMs: 'fast' }).success, 'wrong type');
  t.notOk(workSettingsSchemas.outreach.safeParse({ dailySendCap: 10_000 }).success, 'above the bound');
  t.same(workSettingsSchemas.ai_prompt.parse({ seedKeywords: ['  moka pot '] }).seedKeywords, ['moka pot']);
  t.same(workSettingsOf('interlinking', { maxLinksPerSource: 2, active: true, tone: 'brief' }), { maxLinksPerSource: 2, maxPhraseWords: 5, maxPhraseShare: 0.5 }, 'configuration keys are not work settings');
  t.throws(() => workSettingsOf('interlinking', { maxLinksPerSource: -1 }));
});

t.test('the content agents run on the site articles and count what they did', async (t) => {
  const { services, close } = await workServices();
  t.teardown(close);
  const deps = workDeps(services, ARTICLES);

  const links = await interlinkingWork(runOf('interlinking', 's1', { maxLinksPerSource: 1 }), deps);
  t.same(links.counts, { articlesRead: 12, linksProposed: links.proposals.length });
  t.equal(links.creditsUsed, 0);
  t.ok(links.proposals.some((p) => p.kind === 'interlinking' && p.sourceArticleId === 'a07' && p.targetArticleId === 'a02' && p.anchor === 'burr grinder'));

  const boosts = await articleBoostWork(runOf('article_boost', 's1', { minWords: 100 }), deps);
  t.same(boosts.proposals[0], { kind: 'article_boost', articleId: 'a10', url: 'https://brewathome.example/descaling-espresso-machine/', reasons: ['stale', 'thin', 'poorly_linked'], detail: boosts.proposals[0]?.kind === 'article_boost' ? boosts.proposals[0].detail : '' });
  t.equal(boosts.counts.thin, 1);
  t.equal(boosts.counts.refreshesProposed, boosts.proposals.length);

  const topics = await articleCreationWork(runOf('article_creation', 's1', { seedKeywords: ['moka pot'] }), deps);
  t.same(topics.proposals[0] && topics.proposals[0].kind === 'article_creation' ? topics.proposals[0].topic : null, 'moka pot');
  t.ok(topics.proposals.some((p) => p.kind === 'article_creation' && p.topic === 'gooseneck kettle'));

  const questions = await aiPromptWork(runOf('ai_prompt', 's1', { seedKeywords: ['moka pot'], maxQuestions: 5 }), deps);
  t.equal(questions.proposals.length, 5);
  t.same(questions.counts, { articlesRead: 12, questionsProposed: 5, unanswered: 1 });

  const empty = await interlinkingWork(runOf('interlinking', 's1'), workDeps(services, []));
  t.same(empty, { proposals: [], counts: { articlesRead: 0, linksProposed: 0 }, creditsUsed: 0 }, 'a site without articles: nothing to do, nothing invented');
});

t.test('an agent with a cap passes over what the site has already, so the next run finds the next ones', async (t) => {
  const { services, close } = await workServices();
  t.teardown(close);
  const base = workDeps(services, ARTICLES);
  const known = new Set<string | null>();
  const deps = { ...base, proposedBefore: (p: OpportunityProposal) => known.has(proposalKey(p)) };
  const cases = [
    ['article_creation', { maxTopics: 2 }, articleCreationWork],
    ['ai_prompt', { maxQuestions: 2 }, aiPromptWork],
    ['article_boost', { minWords: 1_000, maxProposals: 2 }, articleBoostWork],
  ] as const;
  for (const [key, settings, work] of cases) {
    const first = await work(runOf(key, 's1', settings), deps);
    t.equal(first.proposals.length, 2, `${key}: the cap`);
    for (const p of first.proposals) known.add(proposalKey(p));
    const second = await work(runOf(key, 's1', settings), deps);
    t.equal(second.proposals.length, 2, `${key}: two more`);
    t.notOk(second.proposals.some((p) => known.has(proposalKey(p))), `${key}: none of the first run's`);
    const all = await work(runOf(key, 's1', settings), base);
    t.same(all.proposals, first.proposals, `${key}: without proposedBefore, the first ones again`);
  }
});
