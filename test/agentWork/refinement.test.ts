import t from 'tap';
import { createRefiner } from '../../src/adapters/refining/createRefiner.ts';
import { OfflineRefiner } from '../../src/adapters/refining/offlineRefiner.ts';
import { aiPromptWork } from '../../src/agentWork/aiPrompt.ts';
import { articleBoostWork } from '../../src/agentWork/articleBoost.ts';
import { articleCreationWork } from '../../src/agentWork/articleCreation.ts';
import { interlinkingWork } from '../../src/agentWork/interlinking.ts';
import { loadConfig } from '../../src/config.ts';
import type { ArticleInput, ProposalOf } from '../../src/domain/agentWork.ts';
import { proposeAiPrompts } from '../../src/domain/agentWork/aiPrompt.ts';
import { proposeArticleTopics } from '../../src/domain/agentWork/articleCreation.ts';
import { proposeInternalLinks } from '../../src/domain/agentWork/interlinking.ts';
import {
  MAX_REFINED_PROPOSALS,
  RefinementRejectedError,
  applyRefinement,
  excerptOf,
  refinementContext,
} from '../../src/domain/agentWork/refinement.ts';
import { type Behaviour, completion, fakeOpenAi, userPrompt } from '../helpers/fakeOpenAi.ts';
import { ARTICLES } from './corpus/homeCoffee.ts';
import { runOf, workDeps, workServices } from './helpers.ts';

const LINK_SETTINGS = { maxLinksPerSource: 1, maxPhraseWords: 5, maxPhraseShare: 0.5 };
const links = proposeInternalLinks(ARTICLES, LINK_SETTINGS);
const questions = proposeAiPrompts(ARTICLES);
const topics = proposeArticleTopics(ARTICLES);
const linkFrom = (source: string) => links.find((l) => l.sourceArticleId === source)!;

t.test('applyRefinement (pure): the subset the model kept, reworded, and nothing it made up', async (t) => {
  t.test('interlinking: a better anchor from the sentence; an unknown pair is dropped; an anchor not in the sentence is not used', async (t) => {
    const frothing = linkFrom('a01'); // "Our guide to milk frothing covers steaming for lattes and cappuccinos."
    const ratio = linkFrom('a03');
    t.equal(frothing.anchor, 'lattes and cappuccinos', 'the heuristic anchor this test improves');
    const context = refinementContext('interlinking', links, ARTICLES);
    const { proposals, dropped } = applyRefinement('interlinking', context, ARTICLES, {
      items: [
        { sourceArticleId: 'a03', targetArticleId: 'a12', anchor: 'a poor coffee-to-water ratio' },
        { sourceArticleId: 'a01', targetArticleId: 'a09', anchor: 'MILK FROTHING' },
        { sourceArticleId: 'a01', targetArticleId: 'a99', anchor: 'milk frothing' },
        { sourceArticleId: 'a01', targetArticleId: 'a09', anchor: 'a second item for the same pair' },
      ],
    });
    t.equal(dropped, 1, 'the pair with an unknown target');
    t.same(proposals, [ratio, { ...frothing, anchor: 'milk frothing' }], "the model's order; its anchor as the sentence writes it; the rest left out");
  });

  t.test('ai_prompt: reworded questions, another article of the input as the answer, unknown articles and refs dropped', async (t) => {
    const context = refinementContext('ai_prompt', questions, ARTICLES);
    const espresso = questions[0]!;
    const { proposals, dropped } = applyRefinement('ai_prompt', context, ARTICLES, {
      items: [
        { ref: 0, question: 'How do I dial in espresso on a home machine?', articleId: espresso.articleId, rationale: 'ignored: the same article' },
        { ref: 1, question: 'Which burr grinder should I buy?', articleId: 'a01', rationale: 'The espresso guide explains why grinder consistency matters most.' },
        { ref: 2, question: 'What is a good French press ratio?', articleId: 'a404', rationale: 'made up' },
        { ref: 999, question: 'Who invented coffee?', articleId: null, rationale: 'made up' },
        { ref: 3, question: 'See https://spam.example for the answer', articleId: null, rationale: 'Nothing answers it yet.' },
      ],
    });
    t.equal(dropped, 2, 'the unknown article and the unknown ref');
    t.same(proposals[0], { ...espresso, question: 'How do I dial in espresso on a home machine?', originalQuestion: espresso.question }, 'same answer: the heuristic rationale stays; the heuristic question is kept');
    t.same(proposals[1], {
      kind: 'ai_prompt',
      question: 'Which burr grinder should I buy?',
      originalQuestion: 'How do I choose a burr grinder?',
      articleId: 'a01',
      url: ARTICLES.find((a) => a.id === 'a01')!.url,
      rationale: 'The espresso guide explains why grinder consistency matters most.',
    }, "the URL is the article's, never the model's");
    t.same(proposals[2], { ...questions[3]!, articleId: null, url: null, rationale: 'Nothing answers it yet.' }, 'wording naming a URL is not used');
  });

  t.test('article_creation: a working title and an angle, the evidence kept', async (t) => {
    const context = refinementContext('article_creation', topics, ARTICLES);
    const { proposals } = applyRefinement('article_creation', context, ARTICLES, {
      items: [{ ref: 1, title: 'Do You Need a Kitchen Scale for Coffee?', keywords: ['Coffee Scale', 'kitchen scale'], angle: 'Why weighing beats scoops, and which scale to buy.' }],
    });
    const scale = topics[1]!;
    t.same(proposals, [
      {
        kind: 'article_creation',
        topic: 'Do You Need a Kitchen Scale for Coffee?',
        keywords: ['kitchen scale', 'coffee scale'],
        rationale: `${scale.rationale} Angle: Why weighing beats scoops, and which scale to buy.`,
      },
    ]);
  });

  t.test('an answer that keeps nothing of the input is rejected', async (t) => {
    const context = refinementContext('interlinking', links, ARTICLES);
    t.throws(() => applyRefinement('interlinking', context, ARTICLES, { items: [{ sourceArticleId: 'x', targetArticleId: 'y', anchor: 'z' }] }), RefinementRejectedError);
    t.throws(() => applyRefinement('interlinking', context, ARTICLES, { items: [] }), RefinementRejectedError);
  });

  t.test('past MAX_REFINED_PROPOSALS the model sees nothing and those proposals follow unchanged', async (t) => {
    const many: ProposalOf<'article_creation'>[] = Array.from({ length: MAX_REFINED_PROPOSALS + 5 }, (_, i) => ({ kind: 'article_creation', topic: `topic ${i}`, keywords: [], rationale: 'r' }));
    const context = refinementContext('article_creation', many, ARTICLES);
    t.equal(context.shown.length, MAX_REFINED_PROPOSALS);
    const { proposals } = applyRefinement('article_creation', context, ARTICLES, { items: [{ ref: 2, title: 'Topic Two', keywords: [], angle: 'a' }] });
    t.same(proposals.map((p) => p.topic), ['Topic Two', ...many.slice(MAX_REFINED_PROPOSALS).map((p) => p.topic)]);
  });

  t.test('the context: short excerpts, only the articles the links name', async (t) => {
    const context = refinementContext('interlinking', [linkFrom('a01')], ARTICLES);
    t.same(context.articles.map((a) => a.id), ['a01', 'a09']);
    for (const a of context.articles) {
      t.same(Object.keys(a).sort(), ['excerpt', 'id', 'title', 'url']);
      t.ok(a.excerpt.length <= 241, 'bounded');
    }
    t.equal(excerptOf('one two  three', 100), 'one two three');
    t.equal(excerptOf('alpha beta gamma delta', 12), 'alpha beta…');
    t.equal(refinementContext('ai_prompt', questions.slice(0, 1), ARTICLES).articles.length, ARTICLES.length, 'ai_prompt may answer with any article');
  });
});

/** The model's answer as the fake server gives it, built from the request it received. */
const answer = (build: (request: { articles: ArticleInput[]; proposals: Array<Record<string, unknown>> }) => unknown): Behaviour => (_req, body) => ({
  status: 200,
  json: completion(JSON.stringify(build(JSON.parse(userPrompt(body))))),
});

t.test('the OpenAI refiner against a local OpenAI-compatible server, through the agents\' work', async (t) => {
  const server = await fakeOpenAi(t);
  const { services, close } = await workServices();
  t.teardown(close);
  const errors: unknown[] = [];
  const config = loadConfig({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'test-model', OPENAI_TIMEOUT_MS: '500' });
  const refiner = createRefiner(config, (e) => errors.push(e));
  const deps = workDeps(services, ARTICLES, { refiner });
  const heuristicLinks = await interlinkingWork(runOf('interlinking', 's1', LINK_SETTINGS), workDeps(services, ARTICLES));

  t.test('interlinking refined: the model\'s anchors, its order, an unknown target dropped, one credit', async (t) => {
    errors.length = 0;
    server.set(
      answer(({ proposals }) => ({
        items: [
          { sourceArticleId: 'a01', targetArticleId: 'a09', anchor: 'milk frothing' },
          { sourceArticleId: 'a03', targetArticleId: 'a12', anchor: 'coffee to water ratio' },
          { sourceArticleId: 'a03', targetArticleId: 'a404', anchor: 'ratio' },
          ...proposals.slice(3, 5).map((p) => ({ sourceArticleId: p.sourceArticleId, targetArticleId: p.targetArticleId, anchor: p.anchor })),
        ],
      })),
    );
    const result = await interlinkingWork(runOf('interlinking', 's1', LINK_SETTINGS), deps);
    t.same(errors, []);
    t.same(result.counts, { articlesRead: 12, linksProposed: 4, aiRefined: 1, aiDropped: 1 });
    t.equal(result.creditsUsed, 1);
    t.match(result.proposals[0], { sourceArticleId: 'a01', targetArticleId: 'a09', anchor: 'milk frothing', sentence: 'Our guide to milk frothing covers steaming for lattes and cappuccinos.' });
    t.notOk(result.proposals.some((p) => p.kind === 'interlinking' && p.targetArticleId === 'a404'));
    t.same(result.proposals.slice(2), heuristicLinks.proposals.slice(3, 5));

    const request = server.seen.at(-1)!;
    t.equal(request.auth, 'Bearer sk-test');
    t.match(request.body.response_format, { type: 'json_schema', json_schema: { name: 'interlinking_refinement', strict: true } });
    const prompt = JSON.parse(userPrompt(request.body));
    t.equal(prompt.site, 'brewathome.example');
    t.equal(prompt.proposals.length, heuristicLinks.proposals.length);
    t.same(prompt.proposals[0], { ref: 0, sourceArticleId: 'a01', targetArticleId: 'a09', anchor: 'lattes and cappuccinos', sentence: 'Our guide to milk frothing covers steaming for lattes and cappuccinos.' });
    t.ok(prompt.articles.every((a: Record<string, string>) => Object.keys(a).sort().join() === 'excerpt,id,title,url'), 'articles as briefs only');
  });

  t.test('article_boost refined: advice appended to the measured detail, reasons kept', async (t) => {
    server.set(answer(({ proposals }) => ({ items: proposals.map((p) => ({ articleId: p.articleId, advice: `Add a step-by-step section to ${String(p.articleId)}.` })).reverse() })));
    const settings = { minWords: 100 };
    const plain = await articleBoostWork(runOf('article_boost', 's1', settings), workDeps(services, ARTICLES));
    const result = await articleBoostWork(runOf('article_boost', 's1', settings), deps);
    t.equal(result.proposals.length, plain.proposals.length);
    const first = result.proposals[0] as ProposalOf<'article_boost'>;
    const same = plain.proposals.find((p) => p.kind === 'article_boost' && p.articleId === first.articleId) as ProposalOf<'article_boost'>;
    t.same(first, { ...same, detail: `${same.detail} What to refresh: Add a step-by-step section to ${first.articleId}.` });
    t.same(result.proposals.map((p) => (p as ProposalOf<'article_boost'>).articleId), plain.proposals.map((p) => (p as ProposalOf<'article_boost'>).articleId).reverse(), "the model's ranking");
    t.match(result.counts, { refreshesProposed: plain.proposals.length, thin: plain.counts.thin, aiRefined: 1, aiDropped: 0 });
  });

  t.test('article_creation and ai_prompt refined: titles and questions in the model\'s words', async (t) => {
    server.set(answer(({ proposals }) => ({ items: [{ ref: 0, title: `The Beginner's Guide to ${String(proposals[0]!.topic)}`, keywords: [], angle: 'What they taste like and how to brew them.' }] })));
    const created = await articleCreationWork(runOf('article_creation', 's1'), deps);
    t.same(created.proposals.map((p) => (p as ProposalOf<'article_creation'>).topic), [`The Beginner's Guide to ${topics[0]!.topic}`]);
    t.same(created.counts, { articlesRead: 12, topicsProposed: 1, aiRefined: 1, aiDropped: 0 });

    server.set(answer(() => ({ items: [{ ref: 1, question: 'What grinder should I buy for espresso?', articleId: 'a02', rationale: 'r' }, { ref: 0, question: 'Why is my espresso sour?', articleId: null, rationale: 'No article answers this yet.' }] })));
    const asked = await aiPromptWork(runOf('ai_prompt', 's1'), deps);
    t.same(asked.proposals.map((p) => (p as ProposalOf<'ai_prompt'>).question), ['What grinder should I buy for espresso?', 'Why is my espresso sour?']);
    t.same(asked.counts, { articlesRead: 12, questionsProposed: 2, unanswered: 1, aiRefined: 1, aiDropped: 0 });
  });

  for (const [what, behaviour] of [
    ['an HTTP 500', () => ({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } })],
    ['output that is not JSON', () => ({ status: 200, json: completion('Sure! Here are better links: ...') })],
    ['output failing the schema', () => ({ status: 200, json: completion(JSON.stringify({ links: [] })) })],
    ['an answer naming only unknown articles', () => ({ status: 200, json: completion(JSON.stringify({ items: [{ sourceArticleId: 'a01', targetArticleId: 'nope', anchor: 'x y' }] })) })],
    ['a timeout', () => ({ status: 200, json: completion(JSON.stringify({ items: [] })), delayMs: 2_000 })],
  ] as Array<[string, Behaviour]>) {
    t.test(`${what}: the heuristic proposals stand, the run does not fail, no credit`, async (t) => {
      errors.length = 0;
      server.set(behaviour);
      const result = await interlinkingWork(runOf('interlinking', 's1', LINK_SETTINGS), deps);
      t.same(result.proposals, heuristicLinks.proposals);
      t.same(result.counts, { ...heuristicLinks.counts, aiRefinementSkipped: 1 });
      t.equal(result.creditsUsed, 0);
      t.equal(errors.length, 1, 'the failure is reported');
    });
  }

  t.test("the run's signal stops the wait for the model", async (t) => {
    const reported: unknown[] = [];
    const slow = createRefiner({ ...config, OPENAI_TIMEOUT_MS: 30_000 }, (e) => reported.push(e));
    server.set(() => ({ status: 200, json: completion(JSON.stringify({ items: [] })), delayMs: 5_000 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stopping')), 100);
    const started = Date.now();
    const result = await interlinkingWork(runOf('interlinking', 's1', LINK_SETTINGS), workDeps(services, ARTICLES, { refiner: slow, signal: controller.signal }));
    t.ok(Date.now() - started < 4_000, `returned ${Date.now() - started} ms after the start, before the model answered`);
    t.same(result.proposals, heuristicLinks.proposals);
    t.same(reported, [], 'a stopped run is not a model failure');
  });

  t.test('no proposals: the model is not asked', async (t) => {
    const before = server.seen.length;
    const result = await interlinkingWork(runOf('interlinking', 's1'), workDeps(services, ARTICLES.slice(0, 1), { refiner }));
    t.same(result.proposals, []);
    t.equal(server.seen.length, before);
    t.equal(result.creditsUsed, 0);
  });
});

t.test('createRefiner: the offline identity without a key', async (t) => {
  const offline = createRefiner(loadConfig({}));
  t.ok(offline instanceof OfflineRefiner);
  const refined = await offline.refine({ agentKey: 'interlinking', siteDomain: 'brewathome.example', proposals: links, articles: ARTICLES, signal: new AbortController().signal });
  t.same(refined, { proposals: links, outcome: 'unchanged', refiner: 'offline', dropped: 0, creditsUsed: 0 });
  t.equal(createRefiner(loadConfig({ OPENAI_API_KEY: 'sk-x', OPENAI_MODEL: 'm' })).name, 'openai:m');
});
